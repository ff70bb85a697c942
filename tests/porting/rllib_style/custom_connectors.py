"""Connector pieces, as RLlib's connector examples and docs write them: MeanStdFilter and a custom piece on the
env-to-module side, a count-based intrinsic reward piece on the Learner side."""
from collections import Counter

import gymnasium as gym
import numpy as np

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.connectors.env_to_module import MeanStdFilter
from ray.rllib.utils.test_utils import add_rllib_example_script_args


class AddTimeStepToObs(ConnectorV2):
    """Appends the scaled timestep to each observation (written back into the episode)."""

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        return gym.spaces.Box(np.append(input_observation_space.low, 0.0).astype(np.float32),
                              np.append(input_observation_space.high, 1.0).astype(np.float32), dtype=np.float32)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        for sa_episode in self.single_agent_episode_iterator(episodes):
            obs = sa_episode.get_observations(-1)
            sa_episode.set_observations(new_data=np.append(obs, min(sa_episode.t, 500) / 500).astype(np.float32),
                                        at_indices=-1)
        return batch


class CountBasedIntrinsicRewards(ConnectorV2):
    """The seeds' Learner piece: r(t) += 1 / N(o(t))."""

    calls = 0
    max_reward = 0.0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._counts = Counter()

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        CountBasedIntrinsicRewards.calls += 1
        for sa_episode in self.single_agent_episode_iterator(episodes=episodes, agents_that_stepped_only=False):
            observations = sa_episode.get_observations(slice(None, -1))
            rewards = sa_episode.get_rewards()
            for i, (obs, rew) in enumerate(zip(observations, rewards)):
                obs = tuple(np.round(obs, 1))
                self._counts[obs] += 1
                sa_episode.set_rewards(new_data=rew + 1 / self._counts[obs], at_indices=i)
                CountBasedIntrinsicRewards.max_reward = max(CountBasedIntrinsicRewards.max_reward, rew + 1 / self._counts[obs])
        return batch


parser = add_rllib_example_script_args(default_iters=2)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .env_runners(env_to_module_connector=lambda env: [MeanStdFilter(), AddTimeStepToObs()])
        .learners(learner_connector=lambda obs_space, act_space: CountBasedIntrinsicRewards())
        .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
    )
    algo = config.build_algo()
    for _ in range(args.stop_iters):
        result = algo.train()
    module = algo.get_module()
    assert module.observation_space.shape == (5,), module.observation_space
    assert CountBasedIntrinsicRewards.calls == args.stop_iters, CountBasedIntrinsicRewards.calls
    # The Learner trained on rewards above CartPole's 1.0 per step: the intrinsic bonus (1.0 on a first visit).
    assert CountBasedIntrinsicRewards.max_reward == 2.0, CountBasedIntrinsicRewards.max_reward
    algo.stop()
    print("PORTED OK", module.observation_space.shape, CountBasedIntrinsicRewards.calls)
