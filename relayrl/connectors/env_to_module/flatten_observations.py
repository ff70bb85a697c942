"""`FlattenObservations`: nested or discrete observations -> 1-D float32 (one-hot for discrete parts)."""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer


class FlattenObservations(ConnectorV2):
    """Rewrites each episode's newest observation in flat form (Learner mode: every observation).

    `keys_to_remove`: keys of a Dict observation space to drop before flattening.
    (`multi_agent` and `agent_ids` are accepted for RLlib compatibility; relayrl is single-agent.)
    """

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 agent_ids=None, as_learner_connector: bool = False, keys_to_remove=None, **kwargs):
        self._as_learner_connector = as_learner_connector
        self._keys_to_remove = list(keys_to_remove or [])
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def _kept_space(self, space):
        if not self._keys_to_remove:
            return space
        if not isinstance(space, gym.spaces.Dict):
            raise ValueError(f"FlattenObservations(keys_to_remove=...) needs a Dict observation space, got {space}.")
        return gym.spaces.Dict({k: s for k, s in space.spaces.items() if k not in self._keys_to_remove})

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        flat = gym.spaces.flatten_space(self._kept_space(input_observation_space))
        return gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), flat.shape, np.float32)

    def _flatten(self, obs):
        space = self._kept_space(self.input_observation_space)
        if self._keys_to_remove:
            obs = {k: obs[k] for k in space.spaces}
        return gym.spaces.flatten(space, obs).astype(np.float32)

    def _flatten_all(self, episode) -> None:
        """Flatten every stored observation (lookback included) into a new buffer of the flat space.

        A new buffer is needed: a numpy'd episode's observation arrays have the raw shape and dtype.
        """
        buffer = episode.observations
        lookback = buffer.lookback
        positions = list(range(-lookback, 0)) + list(range(len(buffer)))
        flat = [self._flatten(buffer.get(i, neg_index_as_lookback=True)) for i in positions]
        data = (np.stack(flat) if flat else np.zeros((0,) + self.observation_space.shape, np.float32)) \
            if buffer.finalized else flat
        episode.observations = InfiniteLookbackBuffer(data=data, lookback=lookback, space=self.observation_space)
        episode.observation_space = self.observation_space

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
                self._flatten_all(episode)
            return batch
        flat_space = self.observation_space
        for episode in self.single_agent_episode_iterator(episodes):
            episode.set_observations(new_data=self._flatten(episode.get_observations(-1)), at_indices=-1)
            # The episode now holds flat observations: later `get_observations(..., fill=...)` calls
            # (e.g. a frame-stacking piece) must fill with flat zeros, not with the raw space's.
            if episode.observation_space is not flat_space:
                episode.observation_space = flat_space
        return batch
