"""gym_env_vectorize_mode="VECTOR_ENTRY_POINT": the env's own vector env (CartPole's), NEXT_STEP autoreset.

gymnasium's CartPoleVectorEnv draws every sub-env's resets from one generator, so its episodes cannot
equal SYNC's for the same seed; instead each recorded step is checked against CartPole's dynamics
(obs[t], action[t] -> obs[t+1]), which fails if a reset row were recorded, an action were shifted or an
episode started from a final observation.
"""
import logging

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.callbacks import RLlibCallback
from relayrl.env.env_runner import EnvRunner
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner
from relayrl.env.sampling import plan_recorder
from relayrl.env.sampling.episode_recorder import EpisodeRecorder
from relayrl.env.sampling.next_step_recorder import NextStepRecorder
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.testing import CountingEnv


def native_runner(num_envs=8, env_config=None, environment=None, callbacks=None, **env_runners):
    torch.manual_seed(0)  # the module's initial weights (an Algorithm seeds torch; a bare EnvRunner does not)
    config = (PPOConfig().environment("CartPole-v1", env_config=env_config or {}, **(environment or {}))
              .env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode="vector_entry_point",
                           **env_runners)
              .debugging(seed=3))
    if callbacks is not None:
        config.callbacks(callbacks)
    return EnvRunner(config=config)


_SIM = gym.make("CartPole-v1").unwrapped


def check_dynamics(observations, actions):
    """Every recorded step follows CartPole's dynamics from the observation before it."""
    for obs, action, next_obs in zip(observations[:-1], actions, observations[1:]):
        _SIM.state, _SIM.steps_beyond_terminated = np.asarray(obs, np.float64), None
        stepped, *_ = _SIM.step(int(action))
        np.testing.assert_allclose(stepped, next_obs, atol=2e-5)


def check_episodes(episodes, max_len):
    for episode in episodes:
        obs, actions, rewards = episode.get_observations(), episode.get_actions(), episode.get_rewards()
        assert len(obs) == len(actions) + 1 == len(rewards) + 1
        check_dynamics(obs, actions)
        assert np.all(rewards == 1.0) and episode.get_return() == len(episode)
        if episode.t_started == 0:  # a new episode starts inside CartPole's reset bounds
            assert np.all(np.abs(obs[0]) <= 0.05)
        assert episode.t <= max_len
        if episode.is_truncated:
            assert episode.t == max_len
        if episode.is_terminated:  # the final observation is past CartPole's limits
            assert abs(obs[-1][0]) > 2.4 or abs(obs[-1][2]) > 12 * 2 * np.pi / 360


@pytest.mark.parametrize("per_step", [False, True])
def test_native_cartpole_episodes_follow_the_dynamics(per_step):
    calls = {"start": 0, "empty_step": 0}

    class Counting(RLlibCallback):
        def on_episode_start(self, *, episode, **kwargs):
            calls["start"] += 1
            assert len(episode) == 0 and np.all(np.abs(episode.get_observations(-1)) <= 0.05)

        def on_episode_step(self, *, episode, **kwargs):
            calls["empty_step"] += len(episode) == 0

    runner = native_runner(env_config={"max_episode_steps": 12}, rollout_fragment_length=20,
                           callbacks=Counting if per_step else None)
    assert type(runner.env).__name__ == "CartPoleVectorEnv"
    recorder = plan_recorder(runner, 160)
    assert isinstance(recorder, NextStepRecorder)
    assert isinstance(recorder.inner, EpisodeRecorder if per_step else StepLogRecorder)
    ends = set()
    for _ in range(4):
        episodes = runner.sample()
        steps = sum(len(e) for e in episodes)
        assert 160 <= steps < 160 + 8  # only real steps count (no reset rows), whole vector steps
        check_episodes(episodes, max_len=12)
        ends |= {"truncated" for e in episodes if e.is_truncated} | {"terminated" for e in episodes if e.is_terminated}
    assert ends == {"truncated", "terminated"}
    if per_step:
        assert calls["start"] > 20 and calls["empty_step"] == 0
    runner.stop()


def test_cut_chunks_continue_from_their_last_observation():
    runner = native_runner(num_envs=4, rollout_fragment_length=7)
    last = {}
    for _ in range(6):
        for e in runner.sample():
            if e.id_ in last:  # the successor's first observation is the chunk's last one
                np.testing.assert_array_equal(e.get_observations(0), last.pop(e.id_))
            if not e.is_done:
                last[e.id_] = e.get_observations(-1)
            check_dynamics(e.get_observations(), e.get_actions())
    runner.stop()


def test_an_episode_ending_at_the_end_of_a_sample_call_starts_in_the_next():
    runner = native_runner(num_envs=2, env_config={"max_episode_steps": 5}, rollout_fragment_length=5)
    first = runner.sample()  # both sub-envs truncate on the call's last step
    assert [len(e) for e in first] == [5, 5] and all(e.is_truncated for e in first)
    assert runner._next_step_resets == {0, 1}
    second = runner.sample()
    assert all(e.t_started == 0 for e in second)  # no reset row, no final observation carried over
    check_episodes(second, max_len=5)
    runner.stop()


def test_clipped_rewards_and_unclipped_returns():
    # Sutton & Barto's reward: -1 at the end, 0 before; clipped to -0.5 for training, reported as -1.
    runner = native_runner(env_config={"sutton_barto_reward": True}, environment={"clip_rewards": 0.5},
                           rollout_fragment_length=200)
    episodes = [e for e in runner.sample() if e.is_terminated]
    assert episodes and all(e.get_return() == -0.5 for e in episodes)
    logger = MetricsLogger()
    logger.merge_and_log_n_dicts([runner.get_metrics()], key="env_runners")
    metrics = logger.reduce()["env_runners"]
    assert metrics["episode_return_mean"] == -1.0  # the env's own score, not the clipped -0.5
    assert metrics["episode_len_mean"] > 8
    runner.stop()


def test_option_accepts_gymnasium_spellings():
    config = PPOConfig().env_runners(gym_env_vectorize_mode="vector_entry_point")
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    config.env_runners(gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT)
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"


@pytest.mark.parametrize("option, value", [("horizon", 20), ("no_done_at_end", True),
                                           ("record_video_every_n_episodes", 5)])
def test_options_needing_per_sub_env_wrappers_are_refused(option, value):
    section = "environment" if option == "record_video_every_n_episodes" else "env_runners"
    kwargs = {section: {option: value}}
    with pytest.raises(ValueError, match=f"{option}=.*gym_env_vectorize_mode='SYNC'"):
        if section == "environment":
            native_runner(environment=kwargs["environment"])
        else:
            native_runner(**kwargs["env_runners"])


def test_foreach_env_names_the_mode():
    runner = native_runner(num_envs=2)
    with pytest.raises(ValueError, match="foreach_env needs sub-env objects.*'SYNC'"):
        runner.foreach_env(lambda env: env)
    runner.stop()


def test_bad_env_config_names_env_config():
    with pytest.raises(TypeError, match="env_config=.*'SYNC'"):
        native_runner(env_config={"no_such_option": 1})


def test_env_without_vector_entry_point_falls_back_to_sync(caplog):
    config = (PPOConfig().environment(CountingEnv)
              .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="VECTOR_ENTRY_POINT"))
    with caplog.at_level(logging.WARNING, logger="relayrl"):
        runner = EnvRunner(config=config)
    assert isinstance(runner.env, gym.vector.SyncVectorEnv)
    assert "using SYNC vector envs instead" in caplog.text
    assert sum(len(e) for e in runner.sample(num_timesteps=10)) == 10
    runner.stop()


def test_multi_agent_runner_refuses_the_mode():
    config = (PPOConfig().environment(make_multi_agent("CartPole-v1"))
              .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "p")
              .env_runners(gym_env_vectorize_mode="VECTOR_ENTRY_POINT"))
    with pytest.raises(ValueError, match="'VECTOR_ENTRY_POINT' is not available for multi-agent envs"):
        MultiAgentEnvRunner(config=config)


def test_ppo_learns_cartpole_with_the_native_vector_env():
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_envs_per_env_runner=16, gym_env_vectorize_mode="VECTOR_ENTRY_POINT")
              .training(train_batch_size=2048, minibatch_size=256, num_epochs=6, lr=1e-3)
              .rl_module(model_config={"fcnet_hiddens": [64, 64]})
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    best = 0.0
    for _ in range(20):  # ~41k env steps at most; seed 0 passes 100 at about 18k
        best = max(best, algo.train()["env_runners"].get("episode_return_mean") or 0.0)
        if best >= 100:
            break
    algo.stop()
    assert best >= 100
