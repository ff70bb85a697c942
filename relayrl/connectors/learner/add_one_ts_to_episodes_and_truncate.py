"""PPO/IMPALA Learner piece: extend each episode by one artificial step so its last obs gets a value.

The value of that extra step is the bootstrap value (zeroed later if the episode terminated);
`loss_mask` is False there so the step never enters the loss.
"""
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class AddOneTsToEpisodesAndTruncate(ConnectorV2):
    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            n = len(episode)
            if n == 0:
                continue
            episode.observations.append(episode.get_observations(-1))
            episode.infos.append({})
            episode.actions.append(episode.get_actions(-1))
            episode.rewards.append(0.0)
            for buffer in episode.extra_model_outputs.values():
                buffer.append(buffer.get(-1))
            episode.t += 1
            terminateds = np.zeros(n + 1, dtype=bool)
            terminateds[n - 1] = bool(episode.is_terminated)
            terminateds[n] = True  # the artificial step always ends the sequence
            truncateds = np.zeros(n + 1, dtype=bool)
            truncateds[n] = True
            loss_mask = np.ones(n + 1, dtype=bool)
            loss_mask[n] = False
            self.add_n_batch_items(batch, Columns.TERMINATEDS, terminateds, n + 1, episode)
            self.add_n_batch_items(batch, Columns.TRUNCATEDS, truncateds, n + 1, episode)
            self.add_n_batch_items(batch, Columns.LOSS_MASK, loss_mask, n + 1, episode)
            episode.is_truncated = not episode.is_terminated
        return batch
