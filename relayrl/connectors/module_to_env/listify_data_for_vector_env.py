"""Default module-to-env piece (last): per-episode items -> one list per column in vector-env order."""
from relayrl.connectors.connector_v2 import ConnectorV2


class ListifyDataForVectorEnv(ConnectorV2):
    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if episodes and hasattr(episodes[0], "agent_episodes"):  # multi-agent: one {agent_id: item} per env
            position = {episode.id_: i for i, episode in enumerate(episodes)}
            for column, data in batch.items():
                if isinstance(data, dict) and (not data or isinstance(next(iter(data)), tuple)):
                    per_env = [{} for _ in episodes]
                    for (eps_id, agent_id, *_), items in data.items():
                        per_env[position[eps_id]][agent_id] = items[0]
                    batch[column] = per_env
            return batch
        for column, data in batch.items():
            if isinstance(data, dict) and data and isinstance(next(iter(data)), tuple):
                batch[column] = [item for items in data.values() for item in items]
        return batch
