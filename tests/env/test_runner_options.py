"""Every env option is honoured by every kind of runner (they all step envs through one EnvStepper), or refused
when the runner is built (env/runner_options.py): one test per option per runner kind.

Runner kinds: the single-agent and multi-agent EnvRunners (RLModules) and the Policy API's single-agent and
multi-agent runners. Options: clip_rewards, num_envs_per_env_runner, restart_failed_sub_environments,
horizon / soft_horizon / no_done_at_end, the env checks (disable_env_checking) and videos
(record_video_every_n_episodes); env_runner_cls and offline recording (output), refused by the Policy API, and
observation_filter, which it honours.
"""
import os
import re

import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.core.policy_spec import PolicySpec
from relayrl.env.env_checks import EnvAPIError
from relayrl.env.env_runner import EnvRunner
from relayrl.env.env_stepper import SubEnvFailuresError
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.rollout.worker_set import policy_runner_class

KINDS = ["env_runner", "multi_agent_env_runner", "policy_runner", "multi_agent_policy_runner"]
MULTI_AGENT = {"multi_agent_env_runner", "multi_agent_policy_runner"}


class Paying(gym.Env):
    """Pays `reward` per step for `length` steps; renders 8x8 frames; `fail_at` ([key into FAILED, steps]): the first
    env of the process to take that many steps raises, once (key "always": every time); `bad_obs`: its
    observations have the wrong shape."""

    FAILED = set()
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, config=None):
        config = dict(config or {})
        self.reward, self.length = float(config.get("reward", 5.0)), int(config.get("length", 8))
        self.fail_at, self.bad_obs = config.get("fail_at"), bool(config.get("bad_obs", False))
        self.render_mode = config.get("render_mode")
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.t = self.steps = self.resets = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.resets = 0, self.resets + 1
        return self._obs(), {}

    def step(self, action):
        self.t, self.steps = self.t + 1, self.steps + 1
        if self.fail_at is not None and self.steps >= self.fail_at[1] and (self.fail_at[0] not in self.FAILED
                                                                            or self.fail_at[0] == "always"):
            self.FAILED.add(self.fail_at[0])
            raise RuntimeError("Paying env failed on purpose")
        return self._obs(), self.reward, self.t >= self.length, False, {}

    def _obs(self):
        obs = np.full(2, self.t / 10.0, np.float32)
        return np.zeros(3, np.float32) if self.bad_obs else obs

    def render(self):
        return np.full((8, 8, 3), self.t % 255, np.uint8)


MultiPaying = make_multi_agent(lambda config: Paying(config))


class RandomPolicy(Policy):
    def compute_actions(self, obs_batch, state_batches=None, **kwargs):
        return np.array([self.action_space.sample() for _ in obs_batch]), [], {}

    def learn_on_batch(self, samples):
        return {}

    def get_weights(self):
        return {}

    def set_weights(self, weights):
        pass


def _by_p(agent_id, *args, **kwargs):
    return "p"


def make_runner(kind: str, env_config=None, **options):
    multi = kind in MULTI_AGENT
    settings = {"env": MultiPaying if multi else Paying, "env_config": {"num_agents": 2, **(env_config or {})},
                "rollout_fragment_length": 10, "num_envs_per_env_runner": 1, "seed": 0, **options}
    if kind.startswith("policy") or kind == "multi_agent_policy_runner":
        config = PolicyAlgorithmConfig().update_from_dict(settings)
        return policy_runner_class({"p": PolicySpec(policy_class=RandomPolicy)}, _by_p, multi)(config=config)
    config = PPOConfig().update_from_dict(settings).rl_module(model_config={"fcnet_hiddens": [4]})
    if multi:
        config.multi_agent(policies={"p"}, policy_mapping_fn=_by_p)
    return (MultiAgentEnvRunner if multi else EnvRunner)(config=config)


def rewards(kind: str, samples) -> np.ndarray:
    """The rewards in what sample() returned (episodes or batches)."""
    if kind == "env_runner":
        return np.concatenate([e.get_rewards() for e in samples])
    if kind == "multi_agent_env_runner":
        return np.concatenate([a.get_rewards() for e in samples for a in e.agent_episodes.values()])
    return np.asarray(samples.policy_batches["p"]["rewards"])


def metric(runner, name: str):
    return runner.metrics.peek(name)


def sub_envs(runner) -> list:
    return runner.foreach_env(lambda env: env)


@pytest.mark.parametrize("kind", KINDS)
def test_clip_rewards(kind):
    runner = make_runner(kind, clip_rewards=True)
    assert set(rewards(kind, runner.sample(num_episodes=2)).tolist()) == {1.0}  # 5.0 clipped to its sign
    agents = 2 if kind in MULTI_AGENT else 1
    assert metric(runner, "episode_return_mean") == 5.0 * 8 * agents  # the returns reported: the env's own


@pytest.mark.parametrize("kind", KINDS)
def test_num_envs_per_env_runner(kind):
    runner = make_runner(kind, num_envs_per_env_runner=3)
    assert runner.num_envs == 3 and len(sub_envs(runner)) == 3
    runner.sample()
    assert [env.steps for env in _user_envs(runner)] == [10] * (3 * (2 if kind in MULTI_AGENT else 1))


def _user_envs(runner) -> list:
    envs = sub_envs(runner)
    return [copy for env in envs for copy in getattr(env, "envs", [env])]  # (make_multi_agent's copies)


@pytest.mark.parametrize("kind", KINDS)
def test_restart_failed_sub_environments(kind):
    key = f"restart-{kind}"
    runner = make_runner(kind, {"fail_at": [key, 5]}, restart_failed_sub_environments=True)
    samples = runner.sample(num_episodes=3)
    assert key in Paying.FAILED and metric(runner, "num_env_restarts") == 1
    assert len(rewards(kind, samples)) >= 3 * 8  # three whole episodes after the rebuild
    key = f"fail-{kind}"
    runner = make_runner(kind, {"fail_at": [key, 5]})
    with pytest.raises(RuntimeError, match="failed on purpose"):
        runner.sample(num_episodes=3)


def test_restart_failed_sub_environments_gives_up_after_the_tolerance():
    runner = make_runner("policy_runner", {"fail_at": ["always", 1]}, restart_failed_sub_environments=True,
                         num_consecutive_env_runner_failures_tolerance=2)
    with pytest.raises(SubEnvFailuresError, match="failed 3 times in a row"):
        runner.sample()


@pytest.mark.parametrize("kind", KINDS)
def test_horizon_and_soft_horizon(kind):
    runner = make_runner(kind, horizon=3)
    runner.sample(num_episodes=2)
    assert metric(runner, "episode_len_max") == 3
    assert all(env.resets >= 2 for env in _user_envs(runner))  # each episode reset the env
    runner = make_runner(kind, horizon=3, soft_horizon=True)
    runner.sample(num_episodes=2)
    assert metric(runner, "episode_len_max") == 3
    assert all(env.resets == 1 and env.t == 6 for env in _user_envs(runner))  # one env episode, cut twice


@pytest.mark.parametrize("kind", KINDS)
def test_no_done_at_end(kind):
    runner = make_runner(kind, no_done_at_end=True)
    samples = runner.sample(num_episodes=1)
    if kind == "env_runner":
        assert samples[0].is_truncated and not samples[0].is_terminated
    elif kind == "multi_agent_env_runner":
        assert samples[0].is_truncated and not samples[0].is_terminated
    else:
        batch = samples.policy_batches["p"]
        assert not batch["terminateds"].any() and batch["truncateds"][-1]


@pytest.mark.parametrize("kind", KINDS)
def test_env_checks(kind):
    with pytest.raises(EnvAPIError, match=r"observation.* shape.*\(3,\).*\(2,\)"):
        make_runner(kind, {"bad_obs": True}).sample()
    try:  # unchecked, the wrong shape fails later, elsewhere (or, with a policy that ignores it, not at all)
        make_runner(kind, {"bad_obs": True}, disable_env_checking=True).sample()
    except EnvAPIError:
        pytest.fail("disable_env_checking=True still checked the env")
    except Exception:
        pass


@pytest.mark.parametrize("kind", KINDS)
def test_videos(kind, tmp_path):
    options = {"record_video_every_n_episodes": 1, "video_dir": str(tmp_path)}
    if kind in MULTI_AGENT:
        with pytest.raises(ValueError, match="record_video_every_n_episodes=1 is not available for multi-agent envs"):
            make_runner(kind, **options)
        return
    pytest.importorskip("imageio_ffmpeg")
    runner = make_runner(kind, **options)
    runner.set_training_iteration(2)
    runner.sample(num_episodes=2)
    runner.stop()
    videos = sorted(f for f in os.listdir(tmp_path) if f.endswith(".mp4"))
    assert len(videos) >= 2 and videos[0].startswith("iteration-000002")


@pytest.mark.parametrize("kind", sorted(MULTI_AGENT))
def test_multi_agent_runners_refuse_other_vector_modes(kind):
    with pytest.raises(ValueError, match="gym_env_vectorize_mode='ASYNC' is not available for multi-agent envs"):
        make_runner(kind, gym_env_vectorize_mode="ASYNC")


def test_policy_runners_step_async_vector_envs():
    runner = make_runner("policy_runner", num_envs_per_env_runner=2, gym_env_vectorize_mode="ASYNC")
    try:
        assert isinstance(runner.env, gym.vector.AsyncVectorEnv)
        assert len(rewards("policy_runner", runner.sample())) == 20
        assert [env.steps for env in sub_envs(runner)] == [10, 10]  # (the envs live in worker processes)
    finally:
        runner.stop()


@pytest.mark.parametrize("option", ["env_runner_cls", "output"])
def test_the_policy_api_refuses_the_env_runner_options_it_cannot_honour(option, tmp_path):
    """env_runner_cls and offline recording (output) are the RLModule EnvRunners'; the Policy API names them at
    build time instead of sampling without them (and writing no files)."""
    import examples.policy_gradient_custom_policy as pg

    value = {"env_runner_cls": EnvRunner, "output": str(tmp_path / "recorded")}[option]
    config = pg.MyAlgo.get_default_config().environment(Paying).update_from_dict({option: value})
    config.debugging(logger_config={"type": "none"})
    with pytest.raises(ValueError, match=re.escape(f"{option}={value!r} is not available with the Policy API")):
        config.build_algo()
    assert not (tmp_path / "recorded").exists()


def test_the_policy_api_honours_observation_filter():
    """observation_filter='MeanStdFilter' (once refused here) builds, and the policy acts on normalised observations:
    the runner's filter counts every observation (the reset, 20 steps, 2 resets after 8-step episodes)."""
    import examples.policy_gradient_custom_policy as pg

    config = pg.MyAlgo.get_default_config().environment(Paying).env_runners(
        observation_filter="MeanStdFilter", rollout_fragment_length=20).training(train_batch_size=20)
    config.debugging(logger_config={"type": "none"}, seed=0)
    algo = config.build_algo()
    try:
        batch = algo.env_runner_group.local_worker().sample()
        stats = algo.env_runner_group.local_worker().filters["default_policy"].running_stats
        assert stats.count == 1 + 20 + 2
        assert np.abs(batch["obs"]).max() < 3 and batch["obs"][1:8].std() > 0.1  # normalised, not t / 10
    finally:
        algo.stop()
