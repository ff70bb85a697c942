"""Default Learner piece: actions, rewards, done flags and extra model outputs of every episode step."""
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class AddColumnsFromEpisodesToTrainBatch(ConnectorV2):
    """Adds each column only if no earlier piece put it into the batch already."""

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        present = set(batch)
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            n = len(episode)
            columns = {
                Columns.ACTIONS: lambda: episode.get_actions(slice(0, n)),
                Columns.REWARDS: lambda: np.asarray(episode.get_rewards(slice(0, n)), np.float32),
                Columns.TERMINATEDS: lambda: _last_flag(n, episode.is_terminated),
                Columns.TRUNCATEDS: lambda: _last_flag(n, episode.is_truncated),
            }
            for key in episode.extra_model_outputs:
                columns[key] = lambda key=key: episode.get_extra_model_outputs(key, slice(0, n))
            for column, get in columns.items():
                if column in present:
                    continue
                data = get()
                # list -> one item per step; array or dict/tuple of arrays (numpy'd episode) -> at once.
                self.add_n_batch_items(batch, column, data, n, episode)
        return batch


def _last_flag(n: int, flag: bool) -> np.ndarray:
    flags = np.zeros(n, dtype=bool)
    if n and flag:
        flags[-1] = True
    return flags
