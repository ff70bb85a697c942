"""RLlib 2.60's base classes for an observation transform: write `preprocess()` (and, if the space changes,
`recompute_output_observation_space()`); the newest observation of each episode is replaced by its result, in the
episode, so the Learner trains on what the module saw."""
import abc

import gymnasium as gym

from relayrl.connectors.connector_v2 import ConnectorV2


def _agent_space(space, agent_id):
    """An agent's part of a multi-agent space (a Dict by agent id); the space itself otherwise."""
    if agent_id is not None and isinstance(space, gym.spaces.Dict) and agent_id in space.spaces:
        return space[agent_id]
    return space


class SingleAgentObservationPreprocessor(ConnectorV2, abc.ABC):
    """`preprocess(observation, episode)` -> the new observation, for one agent's newest observation.

    In multi-agent runs it is called once per agent that has a new observation, with that agent's
    `SingleAgentEpisode` (`episode.agent_id`, `episode.module_id`).
    """

    @abc.abstractmethod
    def preprocess(self, observation, episode):
        """The new observation for `observation` (one agent's, not batched), taken from `episode`."""

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes):
            new_observation = self.preprocess(observation=episode.get_observations(-1), episode=episode)
            episode.set_observations(new_data=new_observation, at_indices=-1)
            space = _agent_space(self.observation_space, episode.agent_id)
            if space is not None and episode.observation_space is not space:
                episode.observation_space = space  # later pieces' fills take the new shape
        return batch


class MultiAgentObservationPreprocessor(ConnectorV2, abc.ABC):
    """`preprocess(observations, episode)` -> the new {agent_id: observation} dict, for the newest observations of a
    MultiAgentEpisode's agents (those that have one)."""

    @abc.abstractmethod
    def preprocess(self, observations, episode):
        """The new {agent_id: observation} for `observations` ({agent_id: observation}) of `episode`."""

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in episodes:
            new_observations = self.preprocess(observations=episode.get_observations(-1), episode=episode)
            for agent_id, observation in new_observations.items():
                agent_episode = episode.agent_episodes[agent_id]
                agent_episode.set_observations(new_data=observation, at_indices=-1)
                space = _agent_space(self.observation_space, agent_id)
                if space is not None and agent_episode.observation_space is not space:
                    agent_episode.observation_space = space
        return batch


ObservationPreprocessor = SingleAgentObservationPreprocessor  # RLlib's older name
