"""Default piece: put the episodes' observations into the batch under `obs`."""
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class AddObservationsFromEpisodesToBatch(ConnectorV2):
    """Env-to-module: each episode's latest observation. Learner: all observations of each episode."""

    def __init__(self, input_observation_space=None, input_action_space=None, *,
                 as_learner_connector: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._as_learner_connector = as_learner_connector

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if Columns.OBS in batch:  # an earlier (custom) piece already provided observations
            return batch
        if self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
                # A list (list-based episode) adds one item per step; an already batched array or
                # dict/tuple of arrays (numpy'd episode, e.g. Dict observations) is added at once.
                observations = episode.get_observations(slice(0, len(episode)))
                self.add_n_batch_items(batch, Columns.OBS, observations, len(episode), episode)
            return batch
        for episode in self.single_agent_episode_iterator(episodes):
            self.add_batch_item(batch, Columns.OBS, episode.get_observations(-1), episode)
        return batch
