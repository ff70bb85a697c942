"""Multi-agent piece: regroup a column-major batch keyed by (episode, agent, module) into one batch per module."""
from typing import Any, Callable, Dict, Optional

import gymnasium as gym

from relayrl.connectors.connector_v2 import ConnectorV2

MEMORIZED_MAP_STRUCTURE = "memorized_map_structure"
_PROBE_EPISODE_ID = "relayrl-module-spaces-probe"  # the episode a mapping function sees before sampling


class AgentToModuleMapping(ConnectorV2):
    """`batch[column][(eps_id, agent_id, module_id)] = [items]` -> `batch[module_id][column][key] = [items]`.

    Env-to-module: only the agents about to act (`episode.get_agents_to_act()`) stay, and
    `shared_data["memorized_map_structure"] = {module_id: [(eps_id, agent_id), ...]}` records the row
    order, so `UnBatchToIndividualItems` / `ModuleToAgentUnmapping` can map the module outputs back.
    Learner (`as_learner_connector=True`): every agent's data goes to its module. Columns whose name is a
    module id pass through. The output spaces are Dicts by module id: the module's spec's space if given,
    else the space of the agents mapping to it (a ValueError if they differ).
    """

    BATCHED_SAFE = False
    WRITES_EPISODES = False
    READS_EPISODES = False  # which agents act, not the episodes' data

    def __init__(self, input_observation_space=None, input_action_space=None, *, rl_module_specs=None,
                 agent_to_module_mapping_fn: Optional[Callable] = None, as_learner_connector: bool = False, **kwargs):
        self._rl_module_specs = dict(rl_module_specs or {})
        self._mapping_fn = agent_to_module_mapping_fn
        self._as_learner_connector = as_learner_connector
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        return self._by_module(input_observation_space, "observation_space")

    def recompute_output_action_space(self, input_observation_space, input_action_space):
        return self._by_module(input_action_space, "action_space")

    def _by_module(self, agent_spaces, attribute: str):
        if not isinstance(agent_spaces, gym.spaces.Dict) or self._mapping_fn is None:
            return agent_spaces
        return gym.spaces.Dict(module_spaces(agent_spaces, self._mapping_fn, self._rl_module_specs, attribute))

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        acting = None
        if not self._as_learner_connector:
            acting = {(episode.id_, aid) for episode in episodes if hasattr(episode, "agent_episodes")
                      for aid in episode.get_agents_to_act()}
        out: Dict[str, Dict[str, Any]] = {}
        structure: Dict[str, list] = {}
        for column, data in batch.items():
            if not (isinstance(data, dict) and data and isinstance(next(iter(data)), tuple)):
                if column in _ids(rl_module):  # already one module's batch
                    out[column] = data
                continue
            for key, items in data.items():
                if len(key) != 3 or (acting is not None and (key[0], key[1]) not in acting):
                    continue
                module_id = key[2]
                module_batch = out.setdefault(module_id, {})
                module_batch.setdefault(column, {})[key] = items
        if acting is not None and shared_data is not None:
            for module_id, module_batch in out.items():
                first = next(iter(module_batch.values()), {})
                structure[module_id] = [(key[0], key[1]) for key in first]
            shared_data[MEMORIZED_MAP_STRUCTURE] = structure
        return out


def module_spaces(agent_spaces: gym.spaces.Dict, mapping_fn: Callable, rl_module_specs: dict,
                  attribute: str) -> Dict[str, gym.Space]:
    """{module_id: space}: the spec's space if set, else the one space of the agents mapping to the module."""
    spaces: Dict[str, gym.Space] = {}
    for agent_id, space in agent_spaces.spaces.items():
        module_id = module_of_agent_before_sampling(mapping_fn, agent_id)
        spec = rl_module_specs.get(module_id)
        if spec is not None and getattr(spec, attribute, None) is not None:
            spaces[module_id] = getattr(spec, attribute)
        elif module_id not in spaces:
            spaces[module_id] = space
        elif spaces[module_id] != space:
            raise ValueError(f"Agents mapping to module `{module_id}` have different spaces ({spaces[module_id]} and "
                             f"{space} for agent {agent_id!r}); give the module its own {attribute} in its "
                             "RLModuleSpec, or map these agents to different modules.")
    return spaces


def module_of_agent_before_sampling(mapping_fn: Callable, agent_id) -> str:
    """The module `mapping_fn` maps `agent_id` to when no episode exists yet (building the modules' spaces).

    Called with `episode=None` first; a function that reads the episode (RLlib's self-play examples use
    `hash(episode.id_)`) is asked again with an empty MultiAgentEpisode, as it is during sampling. That episode's
    id is fixed, so the observation and the action spaces (two calls) see the same mapping.
    """
    from relayrl.algorithms.multi_agent_mapping import UnknownModuleIdError
    from relayrl.episodes.multi_agent_episode import MultiAgentEpisode

    try:
        return mapping_fn(agent_id, None)
    except UnknownModuleIdError:
        raise
    except Exception:
        pass
    try:
        return mapping_fn(agent_id, MultiAgentEpisode(id_=_PROBE_EPISODE_ID))
    except UnknownModuleIdError:
        raise
    except Exception as error:
        raise ValueError(
            f"policy_mapping_fn({agent_id!r}, episode) raised {error!r} when asked (with episode=None, then with an "
            f"empty MultiAgentEpisode) which module agent {agent_id!r} maps to, which relayrl asks before sampling to "
            "find each module's spaces; make it work for an episode with no steps yet.") from error


def _ids(rl_module):
    return rl_module.keys() if hasattr(rl_module, "keys") else ()
