"""RLlib's example env `ray.rllib.examples.envs.classes.simple_corridor`, written for relayrl (a checkpoint may
name it: relayrl/checkpoints/nameable.py).

`SimpleCorridor`: walk right to the end of a 1-D corridor (`corridor_length`, default 10); reward -0.01 per
step, 1.0 at the end; `set_corridor_length(n)`.
"""
import gymnasium as gym
import numpy as np


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


__all__ = ["SimpleCorridor"]
