"""Default module-to-env piece (last): per-episode items -> one list per column in vector-env order."""
from relayrl.connectors.connector_v2 import ConnectorV2


class ListifyDataForVectorEnv(ConnectorV2):
    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for column, data in batch.items():
            if isinstance(data, dict) and data and isinstance(next(iter(data)), tuple):
                batch[column] = [item for items in data.values() for item in items]
        return batch
