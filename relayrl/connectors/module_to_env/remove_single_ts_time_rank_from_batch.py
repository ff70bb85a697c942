"""Default module-to-env piece (stateful modules only): drop the length-1 time axis added for the forward pass."""
from relayrl.connectors.common.stateful import is_stateful, is_stateless_key, stateless_module_ids
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns
from relayrl.core.tree import map_structure


class RemoveSingleTsTimeRankFromBatch(ConnectorV2):
    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def skips(self, rl_module) -> bool:
        return not is_stateful(rl_module)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if not is_stateful(rl_module):
            return batch
        stateless = stateless_module_ids(rl_module)  # multi-agent: modules whose agents got no time axis
        for column, data in list(batch.items()):
            if column == Columns.STATE_OUT:
                continue
            if not (isinstance(data, dict) and data and isinstance(next(iter(data)), tuple)):
                batch[column] = map_structure(lambda x: x[:, 0] if getattr(x, "ndim", 0) > 1 else x, data)
                continue
            for key, items in data.items():
                if not (stateless and is_stateless_key(key, stateless)):
                    items[:] = [map_structure(lambda x: x[0] if getattr(x, "ndim", 0) > 0 else x, it) for it in items]
        return batch
