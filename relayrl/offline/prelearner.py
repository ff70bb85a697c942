"""`OfflinePreLearner` (RLlib's name): rows read from the files -> what the Learner's update takes.

Transition rows become one-step episodes (RLlib's mapping: obs and next obs, the action, the reward, the done
flags, every other column an extra model output), which the Learner connector pipeline turns into the train
batch, as it does the EnvRunners' episodes: custom Learner pieces apply to offline data unchanged. Where the
pipeline is relayrl's default one, TransitionColumns builds the same batch straight from the columns (the fast
path, transition_columns.py). Episode rows are rebuilt into episodes and cut to exactly the batch's timesteps.

Subclass it (`config.offline_data(prelearner_class=...)`) and override `_map_to_episodes(batch)` to read data of
your own layout; a subclass always takes the episode path.
"""
import uuid
from typing import Any, Dict, List, Optional

import numpy as np

from relayrl.algorithms.offline_multi_agent import as_module_episode, offline_module_id
from relayrl.core.columns import Columns
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.offline.reader import OfflineDataError
from relayrl.offline.transition_columns import TransitionColumns

# RLlib's offline schema: columns with a meaning of their own; any other column is an extra model output.
SCHEMA = {name: name for name in (Columns.EPS_ID, Columns.AGENT_ID, Columns.MODULE_ID, Columns.OBS, Columns.ACTIONS,
                                  Columns.REWARDS, Columns.INFOS, Columns.NEXT_OBS, Columns.TERMINATEDS,
                                  Columns.TRUNCATEDS, Columns.T, "agent_index", "dones", "unroll_id")}
_NOT_EXTRA = set(SCHEMA) | {"type"}
_MAX_EMPTY_ROWS = 1_000_000  # (where the dataset's size is not known: a Ray Data shard)


def extra_columns(batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The columns that become extra model outputs (RLlib's rule: neither in the schema nor 'type')."""
    return {k: v for k, v in batch.items() if k not in _NOT_EXTRA}


class OfflinePreLearner:
    """Maps a batch of rows ({column: array}) to `{"episodes": [...]}` or `{"batch": train columns}`."""

    def __init__(self, *, config, spaces=None, learner=None, **kwargs):
        self.config = config
        self.observation_space, self.action_space = spaces or (None, None)
        self.module_id = offline_module_id(config)  # the module the rows train
        fast_ok = type(self) is OfflinePreLearner and learner is not None and not config.input_read_episodes
        self._fast = TransitionColumns.for_learner(learner, self.module_id) if fast_ok else None

    @property
    def uses_fast_path(self) -> bool:
        return self._fast is not None

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, Any]:
        """Transition rows (RLlib's column names, checked against the spaces) -> the Learner's update input."""
        if self._fast is not None:
            return {"batch": self._fast(batch, extra_columns(batch))}
        return {"episodes": self._map_to_episodes(batch)["episodes"]}

    def _map_to_episodes(self, batch: Dict[str, np.ndarray], to_numpy: bool = False, **kwargs) -> Dict[str, List]:
        """One single-step episode per row (RLlib's `OfflinePreLearner._map_to_episodes`)."""
        extra = extra_columns(batch)
        ids = batch.get(Columns.EPS_ID)
        infos = batch.get(Columns.INFOS)
        episodes = []
        obs, next_obs, actions = batch[Columns.OBS], batch[Columns.NEXT_OBS], batch[Columns.ACTIONS]
        rewards, terminateds, truncateds = batch[Columns.REWARDS], batch[Columns.TERMINATEDS], batch[Columns.TRUNCATEDS]
        for i in range(len(obs)):
            info = infos[i] if infos is not None and isinstance(infos[i], dict) else {}
            episode = SingleAgentEpisode(
                str(ids[i]) if ids is not None and ids[i] is not None else uuid.uuid4().hex,
                observations=[obs[i], next_obs[i]], infos=[{}, info], actions=[actions[i]], rewards=[rewards[i]],
                terminated=bool(terminateds[i]), truncated=bool(truncateds[i]),
                extra_model_outputs={k: [v[i]] for k, v in extra.items()}, len_lookback_buffer=0,
                observation_space=self.observation_space, action_space=self.action_space)
            episode = as_module_episode(episode, self.module_id)
            episodes.append(episode.to_numpy() if to_numpy else episode)
        return {"episodes": episodes}


class EpisodeBatcher:
    """Episode rows -> lists of episodes holding exactly `num_timesteps` steps each (the last episode of a batch
    is cut; its rest starts the next batch). Each episode travels with its origin, (file index, row in the file,
    steps of it already handed out) or None, so a checkpoint can name the carried episodes instead of storing them.
    """

    def __init__(self, max_empty_rows: Optional[int] = None):
        self._carry: List[tuple] = []  # (episode, origin) pairs that start the next batch
        # Rows read one after the other holding no step that mean the data has none (a whole pass: the dataset's
        # rows); without the bound, a dataset of empty episodes (all steps in the lookback buffer) read forever.
        self.max_empty_rows = max_empty_rows or _MAX_EMPTY_ROWS

    def batch(self, num_timesteps: int, more_episodes) -> List[SingleAgentEpisode]:
        """`more_episodes()`: the next few (episode, origin) pairs from the files (called until there are enough
        steps)."""
        pending, self._carry = self._carry, []
        out, have, empty_rows = [], 0, 0
        while have < num_timesteps:
            if not pending:
                read = more_episodes()
                pending = [(e, origin) for e, origin in read if len(e)]
                empty_rows = 0 if pending else empty_rows + len(read)
                if empty_rows > self.max_empty_rows:
                    raise OfflineDataError(
                        f"offline data: {empty_rows} episode rows read one after the other hold no steps (episodes "
                        f"of length 0, e.g. every step in the lookback buffer; the dataset has "
                        f"{self.max_empty_rows} rows): record the episodes again.")
                continue
            episode, origin = pending.pop(0)
            need = num_timesteps - have
            if len(episode) > need:  # cut: the rest starts the next batch
                rest_origin = None if origin is None else (origin[0], origin[1], origin[2] + need)
                pending.insert(0, (episode.slice(slice(need, None)), rest_origin))
                episode = episode.slice(slice(0, need))
            out.append(episode)
            have += len(episode)
        self._carry = pending
        return out

    @property
    def carried(self) -> List[tuple]:
        """The origins of the episodes that start the next batch (None where one is not known)."""
        return [origin for _, origin in self._carry]

    def set_carried(self, pairs: List[tuple]) -> None:
        self._carry = list(pairs)


__all__ = ["OfflinePreLearner", "EpisodeBatcher", "SCHEMA", "extra_columns"]
