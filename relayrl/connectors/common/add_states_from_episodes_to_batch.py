"""Default piece (stateful modules only): put the recurrent state into the batch under `state_in`."""
from relayrl.connectors.common.stateful import (
    initial_state_numpy,
    is_multi_rl_module,
    is_stateful,
    max_seq_len,
    module_for_episode,
)
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class AddStatesFromEpisodesToBatch(ConnectorV2):
    """Env-to-module: the latest `state_out` of each episode (or the initial state after reset).

    Learner: the state at the start of every `max_seq_len`-long sequence of each episode.
    Multi-agent: each agent's episode gets its module's state (none for stateless modules).
    """

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *,
                 as_learner_connector: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._as_learner_connector = as_learner_connector

    def skips(self, rl_module) -> bool:
        return not is_stateful(rl_module)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if not is_stateful(rl_module) or Columns.STATE_IN in batch:
            return batch
        initial = {}  # per module, converted once per call

        def stateful_module(episode):
            module = module_for_episode(rl_module, episode) if multi_agent else rl_module
            if id(module) not in initial:
                initial[id(module)] = initial_state_numpy(module) if module.is_stateful() else None
            return module, initial[id(module)]

        multi_agent = is_multi_rl_module(rl_module)  # else one module serves every episode

        if not self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes):
                _, module_initial = stateful_module(episode)
                if module_initial is not None:
                    self.add_batch_item(batch, Columns.STATE_IN, _state_before(episode, len(episode), module_initial),
                                        episode)
            return batch
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            module, module_initial = stateful_module(episode)
            if module_initial is None:
                continue
            for start in range(0, len(episode), max_seq_len(module)):
                self.add_batch_item(batch, Columns.STATE_IN, _state_before(episode, start, module_initial), episode)
        return batch


def _state_before(episode, t: int, initial):
    """The state_out produced at step t-1 (the input state at step t); the initial state at an episode's start."""
    if Columns.STATE_OUT not in episode.extra_model_outputs:
        return initial
    try:
        if t > 0:
            return episode.get_extra_model_outputs(Columns.STATE_OUT, t - 1)
        return episode.get_extra_model_outputs(Columns.STATE_OUT, -1, neg_index_as_lookback=True)
    except IndexError:
        if episode.t_started > 0:
            # A chunk cut from an ongoing episode without lookback: its state is lost. The initial
            # state would silently reset the recurrent memory in the middle of the episode.
            raise ValueError(
                f"Episode chunk {episode.id_} starts at t={episode.t_started} but keeps no `state_out` "
                "in its lookback buffer; set config.env_runners(episode_lookback_horizon=1) or more "
                "for stateful RLModules."
            ) from None
        return initial
