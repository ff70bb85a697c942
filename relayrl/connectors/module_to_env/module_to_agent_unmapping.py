"""Multi-agent module-to-env piece: one batch per module back to one column-major batch keyed by agent."""
from relayrl.connectors.connector_v2 import ConnectorV2


class ModuleToAgentUnmapping(ConnectorV2):
    """`batch[module_id][column][(eps_id, agent_id, module_id)] = [items]` ->
    `batch[column][(eps_id, agent_id, module_id)] = [items]` (the inverse of AgentToModuleMapping)."""

    BATCHED_SAFE = False
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        ids = set(rl_module.keys()) if hasattr(rl_module, "keys") else set()
        if not batch or not all(key in ids for key in batch):
            return batch  # not module-major (e.g. a single-agent batch)
        out = {}
        for module_batch in batch.values():
            for column, data in module_batch.items():
                out.setdefault(column, {}).update(data)
        return out
