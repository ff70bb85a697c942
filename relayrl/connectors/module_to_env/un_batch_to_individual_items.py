"""Default module-to-env piece: split batched module outputs back into one item per episode."""

from relayrl.connectors.common.agent_to_module_mapping import MEMORIZED_MAP_STRUCTURE
from relayrl.connectors.connector_v2 import ConnectorV2, _episode_key, is_module_keyed
from relayrl.core.tree import map_structure


class UnBatchToIndividualItems(ConnectorV2):
    """`batch[col]` (array with a row per episode) -> `batch[col][(eps_id,)] = [row]`.

    Skipped (columns stay arrays, rows in episode order) when every later piece accepts arrays,
    i.e. when no custom module-to-env piece needs per-episode items.
    """

    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False  # episode ids only

    def skips(self, rl_module) -> bool:
        return self._downstream_batched_safe

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if is_module_keyed(batch, rl_module):  # multi-agent: rows in the order AgentToModuleMapping memorized
            structure = (shared_data or {}).get(MEMORIZED_MAP_STRUCTURE, {})
            for module_id, module_batch in batch.items():
                keys = [(eps_id, agent_id, module_id) for eps_id, agent_id in structure.get(module_id, [])]
                for column, data in list(module_batch.items()):
                    module_batch[column] = {key: [map_structure(lambda x, i=i: x[i], data)]
                                            for i, key in enumerate(keys)}
            return batch
        if self._downstream_batched_safe:
            return batch
        keys = [_episode_key(ep) for ep in self.single_agent_episode_iterator(episodes)]
        for column, data in list(batch.items()):
            if isinstance(data, dict) and data and isinstance(next(iter(data)), tuple):
                continue  # already per episode
            batch[column] = {key: [map_structure(lambda x, i=i: x[i], data)] for i, key in enumerate(keys)}
        return batch
