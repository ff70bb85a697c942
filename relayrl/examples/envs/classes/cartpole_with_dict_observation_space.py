"""RLlib's example env `ray.rllib.examples.envs.classes.cartpole_with_dict_observation_space`, written for
relayrl (a checkpoint may name it: relayrl/checkpoints/nameable.py).

`CartPoleWithDictObservationSpace`: CartPole whose observation is a nested Dict/Tuple.
"""
import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv


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
            "angular-pos": {"value": np.array(obs[2], np.float32),
                            "some_random_stuff": int(self.np_random.integers(3))},
            "velocs": (np.array([obs[1]], np.float32), np.array(obs[3], np.float32)),
        }


__all__ = ["CartPoleWithDictObservationSpace"]
