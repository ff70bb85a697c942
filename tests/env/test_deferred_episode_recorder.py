"""DeferredEpisodeRecorder (env/sampling/deferred_episode_recorder.py): a native vector env's episodes built in
bulk when sample() stops are the same as NextStepRecorder's around StepLogRecorder, built as they end.

Two runners with the same seed sample side by side; a no-op on_episode_created callback keeps the second
on NextStepRecorder (it sees each episode as it starts) and changes nothing else.
"""
import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

from relayrl import PPOConfig
from relayrl.callbacks import RLlibCallback
from relayrl.env.env_runner import EnvRunner
from relayrl.env.sampling import carried_episodes, deferred_episode_recorder, plan_sampling
from relayrl.env.sampling.deferred_episode_recorder import DeferredEpisodeRecorder
from relayrl.env.sampling.next_step_recorder import NextStepRecorder
from relayrl.env.sampling.sample_amount import SampleAmount
from relayrl.env.sampling.vector_step_log import VectorStepLog


class Created(RLlibCallback):
    def on_episode_created(self, **kwargs):
        pass


class EpisodeEnd(RLlibCallback):
    def on_episode_end(self, **kwargs):
        pass


def _runner(callbacks=None, num_envs=6, fragment=9, max_steps=11, **env_runners):
    torch.manual_seed(0)
    config = (PPOConfig().environment("CartPole-v1", env_config={"max_episode_steps": max_steps})
              .env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode="vector_entry_point",
                           rollout_fragment_length=fragment, **env_runners)
              .debugging(seed=5))
    if callbacks is not None:
        config.callbacks(callbacks)
    runner = EnvRunner(config=config)
    runner._inference_rng = np.random.default_rng(1)  # (else drawn from torch's global generator)
    return runner


def _recorder(runner):
    amount = SampleAmount(num_timesteps=60, num_episodes=None, complete=False, num_envs=runner.num_envs)
    return plan_sampling(runner, explore=True, random_actions=False, num_timesteps=60, amount=amount).recorder


def _same_buffer(a, b):
    assert a.lookback == b.lookback and a.finalized == b.finalized
    if a.finalized:
        assert type(a.data) is np.ndarray and a.data.dtype == b.data.dtype and a.data.shape == b.data.shape
        np.testing.assert_array_equal(a.data, b.data)
    else:
        assert len(a.data) == len(b.data)
        for x, y in zip(a.data, b.data):
            assert type(x) is type(y)
            np.testing.assert_array_equal(x, y)
            assert getattr(x, "dtype", None) == getattr(y, "dtype", None)


def _same_episode(a, b):
    assert (len(a), a.t_started, a.t, a.is_terminated, a.is_truncated) == \
        (len(b), b.t_started, b.t, b.is_terminated, b.is_truncated)
    for name in ("observations", "actions", "rewards"):
        _same_buffer(getattr(a, name), getattr(b, name))
    assert a.infos.data == b.infos.data and a.infos.lookback == b.infos.lookback
    assert a.extra_model_outputs.keys() == b.extra_model_outputs.keys()
    for key in a.extra_model_outputs:
        _same_buffer(a.extra_model_outputs[key], b.extra_model_outputs[key])
    assert a.custom_data == b.custom_data and a.custom_metrics == b.custom_metrics
    assert set(vars(a)) == set(vars(b))
    assert a.get_duration_s() >= 0
    if a.is_done:  # frozen at the last step
        assert a._last_step_time is not None and a.get_duration_s() == a.get_duration_s()


def _compare(deferred, reference, calls=6):
    for _ in range(calls):
        got, want = deferred.sample(), reference.sample()
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _same_episode(a, b)
        for a, b in zip(deferred._episodes, reference._episodes):  # the ongoing successors (or placeholders)
            if len(b.observations):
                _same_episode(a, b)
        assert deferred._next_step_resets == reference._next_step_resets
    metrics, reference_metrics = deferred.get_metrics(), reference.get_metrics()
    for name in ("episode_return_mean", "episode_len_mean", "episode_len_min", "num_episodes",
                 "num_env_steps_sampled"):
        assert str(metrics[name]) == str(reference_metrics[name]), name


def test_the_default_native_plan_defers_and_a_callback_turns_it_off():
    runner, watched = _runner(), _runner(Created)
    runner.sample(), watched.sample()
    assert isinstance(_recorder(runner), DeferredEpisodeRecorder)
    assert isinstance(_recorder(watched), NextStepRecorder)
    restarting = _runner()
    restarting.config.restart_failed_sub_environments = True
    for other in (_runner(EpisodeEnd), restarting):
        other.sample()
        assert isinstance(_recorder(other), NextStepRecorder)
    clipped = _runner()
    clipped.config.clip_rewards = True
    clipped.sample()
    assert isinstance(_recorder(clipped), NextStepRecorder)
    complete = _runner(batch_mode="complete_episodes")
    complete.sample()
    amount = SampleAmount(num_timesteps=60, num_episodes=None, complete=True, num_envs=6)
    plan = plan_sampling(complete, explore=True, random_actions=False, num_timesteps=60, amount=amount)
    assert isinstance(plan.recorder, NextStepRecorder)
    assert isinstance(_recorder(runner), DeferredEpisodeRecorder)


@pytest.mark.parametrize("fragment, max_steps", [(9, 11), (3, 30), (25, 7)])
@pytest.mark.parametrize("carried_in_bulk", [True, False])
def test_deferred_episodes_equal_those_built_as_they_end(monkeypatch, fragment, max_steps, carried_in_bulk):
    calls = []

    def hand_over_carried(*args):
        calls.append(carried_in_bulk)
        return carried_in_bulk and carried_episodes.hand_over_carried(*args)

    monkeypatch.setattr(deferred_episode_recorder, "hand_over_carried", hand_over_carried)
    _compare(_runner(fragment=fragment, max_steps=max_steps), _runner(Created, fragment=fragment, max_steps=max_steps))
    assert calls


@pytest.mark.parametrize("rows", [0, 5, 15])
def test_a_step_that_does_not_fit_the_log_switches_both_alike(monkeypatch, rows):
    write = VectorStepLog.write

    def write_until(self, *args):
        return self.rows < rows and write(self, *args)

    monkeypatch.setattr(VectorStepLog, "write", write_until)
    _compare(_runner(fragment=25, max_steps=7), _runner(Created, fragment=25, max_steps=7), calls=3)


def test_sample_with_num_episodes_or_timesteps_still_works():
    runner = _runner()
    assert len(runner.sample(num_episodes=4)) == 4
    episodes = runner.sample(num_timesteps=30)
    assert sum(len(e) for e in episodes) >= 30


def test_a_log_that_grows_mid_call_gives_the_same_episodes(monkeypatch):
    init = VectorStepLog.__init__
    monkeypatch.setattr(VectorStepLog, "__init__", lambda self, num_envs, capacity: init(self, num_envs, 1))
    _compare(_runner(fragment=25, max_steps=7), _runner(Created, fragment=25, max_steps=7), calls=3)


class _InfoCartPoles(CartPoleVectorEnv):
    """CartPole's vector env with a per-sub-env info on some steps and resets (gymnasium's masked form)."""

    def reset(self, **kwargs):
        observations, infos = super().reset(**kwargs)
        return observations, {"start": np.arange(self.num_envs), "_start": np.ones(self.num_envs, bool)}

    def step(self, action):
        observations, rewards, terminateds, truncateds, infos = super().step(action)
        mask = self.np_random.random(self.num_envs) < 0.5
        infos = {"x": self.np_random.random(self.num_envs), "_x": mask}
        return observations, rewards, terminateds, truncateds, infos


gym.register("InfoCartPoleDeferredTest-v0", entry_point="gymnasium.envs.classic_control.cartpole:CartPoleEnv",
             vector_entry_point=_InfoCartPoles, max_episode_steps=500)


def test_env_infos_land_where_they_do_without_deferring():
    def runner(callbacks=None):
        torch.manual_seed(0)
        config = (PPOConfig().environment("InfoCartPoleDeferredTest-v0", env_config={"max_episode_steps": 9})
                  .env_runners(num_envs_per_env_runner=5, gym_env_vectorize_mode="vector_entry_point",
                               rollout_fragment_length=13)
                  .debugging(seed=2))
        if callbacks is not None:
            config.callbacks(callbacks)
        built = EnvRunner(config=config)
        built._inference_rng = np.random.default_rng(3)
        return built

    deferred, reference = runner(), runner(Created)
    deferred.sample(), reference.sample()
    assert isinstance(_recorder(deferred), DeferredEpisodeRecorder)
    _compare(deferred, reference, calls=4)
    assert any("x" in info for e in deferred.sample() for info in e.infos.data)
