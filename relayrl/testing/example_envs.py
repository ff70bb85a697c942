"""The example envs RLlib's example scripts import (`ray.rllib.examples.envs.classes...`), written for relayrl.

Each takes an optional `config` dict (or EnvContext) as RLlib's does:

* `SimpleCorridor`: walk right to the end of a 1-D corridor (`corridor_length`, default 10); reward -0.01 per
  step, 1.0 at the end; `set_corridor_length(n)`.
* `StatelessCartPole`: CartPole without the velocities (observation [x, theta]); needs memory to solve well.
* `CartPoleWithDictObservationSpace`: CartPole whose observation is a nested Dict/Tuple.
* `RandomEnv`: random observations and rewards for any spaces (`observation_space`, `action_space`,
  `p_terminated` (0.1), `max_episode_len`).
* `ActionMaskEnv`: a RandomEnv whose observation is {"action_mask", "observations"}; an action the mask
  forbids raises.

(RLlib's multi-agent ones, MultiAgentCartPole and others, are in relayrl/testing/multi_agent_example_envs.py.)
"""
import copy

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv


class SimpleCorridor(gym.Env):
    """A corridor of `corridor_length` cells; actions 0 = left, 1 = right; the episode ends at the far end."""

    def __init__(self, config=None):
        config = config or {}
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(0.0, 999.0, shape=(1,), dtype=np.float32)
        self.set_corridor_length(config.get("corridor_length", 10))
        self._cur_pos = 0.0

    def set_corridor_length(self, length) -> None:
        if length > 999:
            raise ValueError("The maximum `corridor_length` is 999.")
        self.end_pos = length

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._cur_pos = 0.0
        return self._obs(), {}

    def step(self, action):
        if int(action) == 0 and self._cur_pos > 0:
            self._cur_pos -= 1.0
        elif int(action) == 1:
            self._cur_pos += 1.0
        terminated = self._cur_pos >= self.end_pos
        return self._obs(), 1.0 if terminated else -0.01, terminated, False, {}

    def _obs(self):
        return np.array([self._cur_pos], np.float32)


class StatelessCartPole(CartPoleEnv):
    """CartPole whose observation leaves out the cart and pole velocities: [x, theta]."""

    def __init__(self, config=None):
        super().__init__()
        high = np.array([self.x_threshold * 2, self.theta_threshold_radians * 2], dtype=np.float32)
        self.observation_space = gym.spaces.Box(-high, high, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed, options=options)
        return np.array([obs[0], obs[2]], np.float32), info

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return np.array([obs[0], obs[2]], np.float32), reward, terminated, truncated, info


class CartPoleWithDictObservationSpace(CartPoleEnv):
    """CartPole with the same information in a nested observation:
    {"x-pos": [x], "angular-pos": {"value": theta, "some_random_stuff": 0..2}, "velocs": ([x_dot], theta_dot)}."""

    def __init__(self, config=None):
        super().__init__()
        low, high = self.observation_space.low, self.observation_space.high
        self.observation_space = gym.spaces.Dict({
            "x-pos": gym.spaces.Box(low[0], high[0], (1,), dtype=np.float32),
            "angular-pos": gym.spaces.Dict({
                "value": gym.spaces.Box(low[2], high[2], (), dtype=np.float32),
                "some_random_stuff": gym.spaces.Discrete(3),
            }),
            "velocs": gym.spaces.Tuple([
                gym.spaces.Box(low[1], high[1], (1,), dtype=np.float32),
                gym.spaces.Box(low[3], high[3], (), dtype=np.float32),
            ]),
        })

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed, options=options)
        return self._nested(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return self._nested(obs), reward, terminated, truncated, info

    def _nested(self, obs):
        return {
            "x-pos": np.array([obs[0]], np.float32),
            "angular-pos": {"value": np.array(obs[2], np.float32), "some_random_stuff": int(self.np_random.integers(3))},
            "velocs": (np.array([obs[1]], np.float32), np.array(obs[3], np.float32)),
        }


class RandomEnv(gym.Env):
    """Observations and rewards sampled from their spaces; episodes end with probability `p_terminated` per step
    (or after `max_episode_len` steps, truncated)."""

    def __init__(self, config=None):
        config = config or {}
        self.action_space = config.get("action_space", gym.spaces.Discrete(2))
        self.observation_space = config.get("observation_space", gym.spaces.Discrete(2))
        self.reward_space = config.get("reward_space", gym.spaces.Box(-1.0, 1.0, (), np.float32))
        self.static_samples = config.get("static_samples", False)
        if self.static_samples:
            self.observation_sample = self.observation_space.sample()
            self.reward_sample = self.reward_space.sample()
        p_terminated = config.get("p_terminated")
        self.p_terminated = config.get("p_done", 0.1) if p_terminated is None else p_terminated
        self.max_episode_len = config.get("max_episode_len")
        self.check_action_bounds = config.get("check_action_bounds", False)
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
            self.reward_space.seed(seed + 1)
        self.steps = 0
        return self._observation(), {}

    def step(self, action):
        if self.check_action_bounds and not self.action_space.contains(action):
            raise ValueError(f"Illegal action for {self.action_space}: {action}")
        self.steps += 1
        terminated = bool(self.np_random.random() < self.p_terminated)
        truncated = not terminated and self.max_episode_len is not None and self.steps >= self.max_episode_len
        reward = self.reward_sample if self.static_samples else self.reward_space.sample()
        return self._observation(), float(reward), terminated, truncated, {}

    def _observation(self):
        return copy.deepcopy(self.observation_sample) if self.static_samples else self.observation_space.sample()


class ActionMaskEnv(RandomEnv):
    """A RandomEnv publishing a 0/1 mask of the allowed actions: observation {"action_mask", "observations"}.
    Taking an action the mask forbids raises ValueError. (Unlike RLlib's, a mask never forbids every action.)"""

    def __init__(self, config=None):
        super().__init__(config)
        if not isinstance(self.action_space, gym.spaces.Discrete):
            raise ValueError(f"ActionMaskEnv needs a Discrete action space, got {self.action_space}.")
        self._inner_observation_space = self.observation_space
        self.observation_space = gym.spaces.Dict({
            "action_mask": gym.spaces.Box(0.0, 1.0, shape=(int(self.action_space.n),), dtype=np.float32),
            "observations": self._inner_observation_space,
        })
        if self.static_samples:
            self.observation_sample = self.observation_space.sample()
        self.valid_actions = None

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed, options=options)
        return self._with_fixed_mask(obs), info

    def step(self, action):
        if not self.valid_actions[int(action)]:
            raise ValueError(f"Invalid action ({action}) sent to env! valid_actions={self.valid_actions}")
        obs, reward, terminated, truncated, info = super().step(action)
        return self._with_fixed_mask(obs), reward, terminated, truncated, info

    def _with_fixed_mask(self, obs):
        mask = np.round(np.asarray(obs["action_mask"], np.float32))
        if not mask.any():  # at least one action is always allowed
            mask[int(self.np_random.integers(len(mask)))] = 1.0
        self.valid_actions = mask
        obs["action_mask"] = mask
        return obs


__all__ = ["SimpleCorridor", "StatelessCartPole", "CartPoleWithDictObservationSpace", "RandomEnv", "ActionMaskEnv"]
