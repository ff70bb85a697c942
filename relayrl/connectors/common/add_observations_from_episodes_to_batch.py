"""Default piece: put the episodes' observations into the batch under `obs`."""
from relayrl.connectors.common.batch_individual_items import stack_items
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns

# shared_data key under which the EnvRunner passes the vector env's latest observations.
VECTOR_ENV_OBSERVATIONS = "vector_env_observations"


class AddObservationsFromEpisodesToBatch(ConnectorV2):
    """Env-to-module: each episode's latest observation. Learner: all observations of each episode.

    Env-to-module fast paths (same batch as the general path): when only array-accepting pieces
    follow, the observations are stacked at once instead of per episode; when, in addition, no
    earlier piece may have changed the episodes, the vector env's own observation array (which the
    EnvRunner passes in `shared_data`) is used directly.
    """

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *,
                 as_learner_connector: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._as_learner_connector = as_learner_connector

    def reads_episodes(self, rl_module=None) -> bool:
        # Acting on the fast path with untouched episodes, it reads the vector env's observations instead.
        return self._as_learner_connector or not (self._downstream_batched_safe and self._upstream_episodes_untouched)

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
        if self._downstream_batched_safe:
            vector_obs = (shared_data or {}).get(VECTOR_ENV_OBSERVATIONS)
            if vector_obs is not None and self._upstream_episodes_untouched:
                batch[Columns.OBS] = vector_obs
            else:
                batch[Columns.OBS] = stack_items([e.get_observations(-1)
                                                  for e in self.single_agent_episode_iterator(episodes)])
            return batch
        for episode in self.single_agent_episode_iterator(episodes):
            self.add_batch_item(batch, Columns.OBS, episode.get_observations(-1), episode)
        return batch
