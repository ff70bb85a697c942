"""Learner piece (RLlib's): each timestep's next observation under `new_obs` (off-policy and offline losses)."""
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class AddNextObservationsFromEpisodesToTrainBatch(ConnectorV2):
    """Adds `new_obs`: the observations after each step of every episode (all but the first), unless an earlier
    piece put the column into the batch already."""

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if Columns.NEXT_OBS in batch:
            return batch
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            n = len(episode)
            self.add_n_batch_items(batch, Columns.NEXT_OBS, episode.get_observations(slice(1, n + 1)), n, episode)
        return batch


def insert_after_observations(pipeline) -> None:
    """Put this piece right after AddObservationsFromEpisodesToBatch (RLlib's place for it in MARWIL's, CQL's and
    IQL's Learner pipelines)."""
    from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch

    pipeline.insert_after(AddObservationsFromEpisodesToBatch, AddNextObservationsFromEpisodesToTrainBatch())
