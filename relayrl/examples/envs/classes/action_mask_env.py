"""RLlib's example env `ray.rllib.examples.envs.classes.action_mask_env`, written for relayrl (a checkpoint may
name it: relayrl/checkpoints/nameable.py).

`ActionMaskEnv`: a RandomEnv whose observation is {"action_mask", "observations"}; an action the mask
forbids raises.
"""
import gymnasium as gym
import numpy as np

from relayrl.examples.envs.classes.random_env import RandomEnv


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


__all__ = ["ActionMaskEnv"]
