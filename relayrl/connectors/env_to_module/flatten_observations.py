"""`FlattenObservations`: nested or discrete observations -> 1-D float32 (one-hot for discrete parts)."""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer


class FlattenObservations(ConnectorV2):
    """Rewrites each episode's newest observation in flat form (Learner mode: every observation).

    `keys_to_remove`: keys of a Dict observation space to drop before flattening. With `multi_agent=True`
    the input space is a Dict by agent id and each agent's observations are flattened in its own space
    (only those of `agent_ids`, if given).
    """

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 agent_ids=None, as_learner_connector: bool = False, keys_to_remove=None, **kwargs):
        self._as_learner_connector = as_learner_connector
        self._keys_to_remove = list(keys_to_remove or [])
        self._multi_agent = multi_agent
        self._agent_ids = None if agent_ids is None else set(agent_ids)
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def _flattens(self, agent_id) -> bool:
        return not self._multi_agent or self._agent_ids is None or agent_id in self._agent_ids

    def _agent_space(self, space, agent_id):
        return space[agent_id] if self._multi_agent else space

    def _kept_space(self, space):
        if not self._keys_to_remove:
            return space
        if not isinstance(space, gym.spaces.Dict):
            raise ValueError(f"FlattenObservations(keys_to_remove=...) needs a Dict observation space, got {space}.")
        return gym.spaces.Dict({k: s for k, s in space.spaces.items() if k not in self._keys_to_remove})

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        if self._multi_agent:
            if not isinstance(input_observation_space, gym.spaces.Dict):
                return input_observation_space  # spaces not known yet
            return gym.spaces.Dict({aid: self._flat_space(space) if self._flattens(aid) else space
                                    for aid, space in input_observation_space.spaces.items()})
        return self._flat_space(input_observation_space)

    def _flat_space(self, space):
        flat = gym.spaces.flatten_space(self._kept_space(space))
        return gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), flat.shape, np.float32)

    def _flatten(self, obs, agent_id=None):
        space = self._kept_space(self._agent_space(self.input_observation_space, agent_id))
        if self._keys_to_remove:
            obs = {k: obs[k] for k in space.spaces}
        return gym.spaces.flatten(space, obs).astype(np.float32)

    def _flatten_all(self, episode) -> None:
        """Flatten every stored observation (lookback included) into a new buffer of the flat space.

        A new buffer is needed: a numpy'd episode's observation arrays have the raw shape and dtype.
        """
        agent_id = episode.agent_id
        flat_space = self._agent_space(self.observation_space, agent_id)
        buffer = episode.observations
        lookback = buffer.lookback
        positions = list(range(-lookback, 0)) + list(range(len(buffer)))
        flat = [self._flatten(buffer.get(i, neg_index_as_lookback=True), agent_id) for i in positions]
        data = (np.stack(flat) if flat else np.zeros((0,) + flat_space.shape, np.float32)) \
            if buffer.finalized else flat
        episode.observations = InfiniteLookbackBuffer(data=data, lookback=lookback, space=flat_space)
        episode.observation_space = flat_space

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
                if self._flattens(episode.agent_id):
                    self._flatten_all(episode)
            return batch
        for episode in self.single_agent_episode_iterator(episodes):
            agent_id = episode.agent_id
            if not self._flattens(agent_id):
                continue
            flat_space = self._agent_space(self.observation_space, agent_id)
            episode.set_observations(new_data=self._flatten(episode.get_observations(-1), agent_id), at_indices=-1)
            # The episode now holds flat observations: later `get_observations(..., fill=...)` calls
            # (e.g. a frame-stacking piece) must fill with flat zeros, not with the raw space's.
            if episode.observation_space is not flat_space:
                episode.observation_space = flat_space
        return batch
