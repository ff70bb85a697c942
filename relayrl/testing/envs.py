"""Tiny deterministic environments for tests, examples and debugging.

* `CountingEnv`: an episode whose length, observations and rewards are fully known in advance
  (obs = [step, env_id], reward = reward_scale * (step + 1)), recording the actions it receives.
* `CorridorEnv`: RLlib's "SimpleCorridor" -- walk right to the end of a 1-D corridor.
* `SpacesEnv`: random observations/rewards for arbitrary spaces (to test space handling).
* `InnerGymEnv`: the commonest custom env, a gymnasium env kept in an attribute (`self.inner =
  gym.make(...)`), whose state a checkpoint cannot hold (resume tests).

All of them take an `env_config` dict (or an `EnvContext`) as their only constructor argument and
implement the TaskSettableEnv API (`set_task`, `get_task`) so curriculum code can be tested.
"""
from typing import Any, Dict, Optional

import gymnasium as gym
import numpy as np


def _env_id(config) -> int:
    """`config["env_id"]` if given, else a number unique per (worker_index, vector_index) of an EnvContext."""
    if "env_id" in config:
        return int(config["env_id"])
    return 100 * int(getattr(config, "worker_index", 0)) + int(getattr(config, "vector_index", 0))


class CountingEnv(gym.Env):
    """Deterministic episodes of known length.

    env_config keys (all optional):
      episode_len (10): steps per episode.
      truncate (False): end episodes with truncated=True instead of terminated=True.
      reward_scale (1.0): the reward of step t (0-based) is reward_scale * (t + 1), so an episode's
        return is reward_scale * L * (L + 1) / 2.
      continuous (False): Box actions in [action_low, action_high] (defaults -2, 2) instead of Discrete(num_actions).
      num_actions (2): size of the Discrete action space.
      env_id: a number put in the observation (default: 100 * worker_index + vector_index).

    Observation after t steps: [t, env_id] (float32). Actions received are kept in `actions_received`
    (all episodes) and `episode_actions` (current episode).
    """

    metadata = {"render_modes": []}

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        config = config if config is not None else {}
        self.episode_len = int(config.get("episode_len", 10))
        self.truncate = bool(config.get("truncate", False))
        self.reward_scale = float(config.get("reward_scale", 1.0))
        self.env_id = _env_id(config)
        self.worker_index = getattr(config, "worker_index", None)
        self.vector_index = getattr(config, "vector_index", None)
        self.env_config = dict(config)
        self.observation_space = gym.spaces.Box(0.0, np.inf, (2,), np.float32)
        if config.get("continuous", False):
            low, high = float(config.get("action_low", -2.0)), float(config.get("action_high", 2.0))
            self.action_space = gym.spaces.Box(low, high, (1,), np.float32)
        else:
            self.action_space = gym.spaces.Discrete(int(config.get("num_actions", 2)))
        self.t = 0
        self.task = 0
        self.num_resets = 0
        self.actions_received = []
        self.episode_actions = []

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.env_id], np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.num_resets += 1
        self.episode_actions = []
        return self._obs(), {"t": 0}

    def step(self, action):
        action = np.array(action, copy=True) if isinstance(action, np.ndarray) else action
        self.actions_received.append(action)
        self.episode_actions.append(action)
        reward = self.reward_scale * (self.t + 1)
        self.t += 1
        done = self.t >= self.episode_len
        terminated, truncated = (done and not self.truncate), (done and self.truncate)
        return self._obs(), reward, terminated, truncated, {"t": self.t}

    def set_task(self, task) -> None:
        self.task = task

    def get_task(self):
        return self.task


class CorridorEnv(gym.Env):
    """A 1-D corridor (RLlib's SimpleCorridor): start at 0, reach position `corridor_length`.

    Actions: 0 = left, 1 = right. Reward -0.1 per step and +1.0 on reaching the end (terminated).
    Episodes are truncated after `max_episode_steps` (default 100). The optimal return is
    1.0 - 0.1 * (corridor_length - 1). `set_task(n)` / `set_corridor_length(n)` change the length.
    """

    metadata = {"render_modes": []}

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        config = config if config is not None else {}
        self.corridor_length = int(config.get("corridor_length", 5))
        self.max_episode_steps = int(config.get("max_episode_steps", 100))
        self.observation_space = gym.spaces.Box(0.0, np.inf, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.pos = 0
        self.steps = 0

    def set_corridor_length(self, length: int) -> None:
        self.corridor_length = int(length)

    def set_task(self, task) -> None:
        self.set_corridor_length(task)

    def get_task(self):
        return self.corridor_length

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.steps = 0, 0
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.steps += 1
        self.pos = max(0, self.pos + (1 if int(action) == 1 else -1))
        terminated = self.pos >= self.corridor_length
        truncated = not terminated and self.steps >= self.max_episode_steps
        reward = 1.0 if terminated else -0.1
        return np.array([self.pos], np.float32), reward, terminated, truncated, {}


class SpacesEnv(gym.Env):
    """Random observations from any `observation_space`; accepts any `action_space` (both from env_config).

    Episodes last `episode_len` (default 10) steps, reward 1.0 per step. Used to check how modules and
    connectors handle spaces (Dict/Tuple/image observations, MultiDiscrete actions, ...).
    """

    metadata = {"render_modes": []}

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        config = config if config is not None else {}
        self.observation_space = config.get("observation_space", gym.spaces.Box(-1.0, 1.0, (3,), np.float32))
        self.action_space = config.get("action_space", gym.spaces.Discrete(2))
        self.episode_len = int(config.get("episode_len", 10))
        self.t = 0
        self.task = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        return self.observation_space.sample(), 1.0, self.t >= self.episode_len, False, {}

    def set_task(self, task) -> None:
        self.task = task

    def get_task(self):
        return self.task


class InnerGymEnv(gym.Env):
    """A gymnasium env in an attribute: env_config["id"] (default CartPole-v1), stepped as it is."""

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        self.inner = gym.make((config or {}).get("id", "CartPole-v1"))
        self.observation_space, self.action_space = self.inner.observation_space, self.inner.action_space

    def reset(self, *, seed=None, options=None):
        return self.inner.reset(seed=seed, options=options)

    def step(self, action):
        return self.inner.step(action)


__all__ = ["CountingEnv", "CorridorEnv", "InnerGymEnv", "SpacesEnv"]
