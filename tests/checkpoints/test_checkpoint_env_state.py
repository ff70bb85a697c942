"""Env state: the plain-data walk over the wrapper chain, envs with their own get_state, EnvRunner restore."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.checkpoints import CheckpointError
from relayrl.checkpoints.env_state import get_env_state, set_env_state
from relayrl.env.env_runner import EnvRunner


class OwnStateEnv(gym.Env):
    """An env whose state is a Python list (not collected by the plain-data walk) but has get/set_state."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config=None):
        self.trace = []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.trace = []
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.trace.append(int(action) + int(self.np_random.integers(10)))
        obs = np.array([sum(self.trace)], np.float32)
        return obs, 1.0, False, len(self.trace) >= 20, {}

    def get_state(self):
        return {"trace": list(self.trace), "rng": self.np_random.bit_generator.state}

    def set_state(self, state):
        self.trace = list(state["trace"])
        self.np_random.bit_generator.state = state["rng"]


def _step_many(env, n=8):
    return [env.step(i % 2)[0].tolist() for i in range(n)]


def test_cartpole_wrapper_chain_plain_data_round_trip():
    env, twin = gym.make("CartPole-v1"), gym.make("CartPole-v1")
    env.reset(seed=3)
    _step_many(env, 5)
    twin.reset(seed=99)
    state = get_env_state(env)
    assert [layer["class"] for layer in state][-1] == "CartPoleEnv"
    assert any("_elapsed_steps" in layer["state"] for layer in state)  # TimeLimit's step counter
    set_env_state(twin, state)
    assert _step_many(env) == _step_many(twin)
    env.reset()
    twin.reset()  # the restored np_random continues identically
    assert _step_many(env) == _step_many(twin)


def test_env_with_own_get_state_is_used_as_is():
    env, twin = OwnStateEnv(), OwnStateEnv()
    env.reset(seed=1)
    _step_many(env, 4)
    twin.reset(seed=2)
    state = get_env_state(env)
    assert state[0]["own_api"] and state[0]["state"]["trace"] == env.trace
    set_env_state(twin, state)
    assert _step_many(env, 5) == _step_many(twin, 5)


def test_changed_wrapper_chain_is_reported():
    state = get_env_state(gym.make("CartPole-v1"))
    with pytest.raises(CheckpointError, match="wrapper chain changed"):
        set_env_state(OwnStateEnv(), state)


def _runner(env, **kwargs):
    config = (PPOConfig().environment(env).env_runners(num_envs_per_env_runner=3, rollout_fragment_length=7, **kwargs)
              .debugging(seed=5))
    return EnvRunner(config=config)


@pytest.mark.parametrize("env", ["CartPole-v1", OwnStateEnv])
def test_env_runner_continues_its_episodes_exactly(env):
    import torch

    runner = _runner(env)
    runner.sample()
    state = runner.get_state()
    torch_rng = torch.get_rng_state()
    expected = runner.sample() + runner.sample()
    twin = _runner(env)
    twin.set_state(state)
    torch.set_rng_state(torch_rng)  # the Algorithm restores the global RNGs; here by hand
    got = twin.sample() + twin.sample()
    saved_ids = {episode["id_"] for episode in state["sampling"]["episodes"]}
    assert len(got) == len(expected) and saved_ids <= {e.id_ for e in got}  # the ongoing episodes continue
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a.get_observations(), b.get_observations())
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
        np.testing.assert_array_equal(a.get_rewards(), b.get_rewards())
    assert twin.metrics.peek("num_env_steps_sampled_lifetime") == runner.metrics.peek("num_env_steps_sampled_lifetime")
    runner.stop()
    twin.stop()


@pytest.mark.parametrize("mode", ["ASYNC", "VECTOR_ENTRY_POINT"])
def test_async_and_native_env_runners_restart_episodes(mode):
    runner = _runner("CartPole-v1", gym_env_vectorize_mode=mode)
    runner.sample()
    state = runner.get_state()
    assert state["sampling"]["ongoing"] is False
    twin = _runner("CartPole-v1", gym_env_vectorize_mode=mode)
    twin.set_state(state)
    assert twin._needs_reset and len(twin.sample()) > 0
    runner.stop()
    twin.stop()
