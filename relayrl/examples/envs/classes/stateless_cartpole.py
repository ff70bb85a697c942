"""RLlib's example env `ray.rllib.examples.envs.classes.stateless_cartpole`, written for relayrl (a checkpoint may
name it: relayrl/checkpoints/nameable.py).

`StatelessCartPole`: CartPole without the velocities (observation [x, theta]); needs memory to solve well.
"""
import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv


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


__all__ = ["StatelessCartPole"]
