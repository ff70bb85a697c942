"""RLlib's example env `ray.rllib.examples.envs.classes.random_env`, written for relayrl (a checkpoint may
name it: relayrl/checkpoints/nameable.py).

`RandomEnv`: random observations and rewards for any spaces (`observation_space`, `action_space`,
`p_terminated` (0.1), `max_episode_len`).
"""
import copy

import gymnasium as gym
import numpy as np


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


__all__ = ["RandomEnv"]
