"""`FlattenObservations`: nested or discrete observations -> 1-D float32 (one-hot for discrete parts)."""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2


class FlattenObservations(ConnectorV2):
    """Rewrites each episode's newest observation in flat form (Learner mode: every observation)."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 as_learner_connector: bool = False, **kwargs):
        self._as_learner_connector = as_learner_connector
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        flat = gym.spaces.flatten_space(input_observation_space)
        return gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), flat.shape, np.float32)

    def _flatten(self, obs):
        return gym.spaces.flatten(self.input_observation_space, obs).astype(np.float32)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
                flat = [self._flatten(o) for o in episode.get_observations(slice(0, len(episode) + 1))]
                episode.set_observations(new_data=np.stack(flat))
            return batch
        for episode in self.single_agent_episode_iterator(episodes):
            episode.set_observations(new_data=self._flatten(episode.get_observations(-1)), at_indices=-1)
        return batch
