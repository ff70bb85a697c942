"""`RandomPolicy` (RLlib's `examples._old_api_stack.policy.random_policy`): an old-stack Policy that acts
uniformly at random and learns nothing, e.g. the opponent of a trained policy in a multi-agent evaluation."""
import random

import gymnasium as gym
import numpy as np

from relayrl.policy.policy import Policy


class RandomPolicy(Policy):
    """Samples its action space; config `ignore_action_bounds=True` samples a Box without its bounds (to test
    how an env and action clipping treat actions out of bounds)."""

    def __init__(self, observation_space, action_space, config):
        super().__init__(observation_space, action_space, config)
        self.action_space_for_sampling = action_space
        if self.config.get("ignore_action_bounds", False) and isinstance(action_space, gym.spaces.Box):
            self.action_space_for_sampling = gym.spaces.Box(-np.inf, np.inf, action_space.shape, action_space.dtype)

    def compute_actions(self, obs_batch, state_batches=None, prev_action_batch=None, prev_reward_batch=None,
                        **kwargs):
        return [self.action_space_for_sampling.sample() for _ in range(_batch_size(obs_batch))], [], {}

    def learn_on_batch(self, samples) -> dict:
        return {}

    def compute_log_likelihoods(self, actions, obs_batch, state_batches=None, prev_action_batch=None,
                                prev_reward_batch=None, **kwargs):
        return np.array([random.random() for _ in range(_batch_size(obs_batch))])

    def get_weights(self) -> dict:
        return {}

    def set_weights(self, weights) -> None:
        pass


def _batch_size(obs_batch) -> int:
    """Rows of a batch of (possibly nested) observations: the length of its first leaf."""
    while isinstance(obs_batch, dict):
        obs_batch = next(iter(obs_batch.values()))
    while isinstance(obs_batch, tuple):
        obs_batch = obs_batch[0]
    return len(obs_batch)
