"""`OfflineData`: the embedded path from `input_` to Learner updates (one reader, this process).

`sample(n)` reads the next n timesteps (rows, or steps of episode rows), checks them against the spaces, and maps
them with the OfflinePreLearner to the Learner's update input. With remote Learners and Ray Data, each Learner
reads its own shard instead (relayrl/distributed/offline_ray_data.py) with the same row handling (RowHandler).
"""
import logging
from typing import Any, Dict, Optional, Tuple

import gymnasium as gym
import numpy as np

from relayrl.algorithms.offline_multi_agent import as_module_episode
from relayrl.core.columns import Columns
from relayrl.offline import row_checks
from relayrl.offline.episode_rows import ITEM_COLUMN, EpisodeRowError, decode_episode_state, episode_from_state
from relayrl.offline.files import input_files
from relayrl.offline.prelearner import EpisodeBatcher, OfflinePreLearner
from relayrl.offline.reader import MULTI_AGENT_FIX, OfflineDataError, ParquetFiles, RowBatch, RowStream
from relayrl.offline.sample_batch_json import SampleBatchJsonFiles, is_json_file

logger = logging.getLogger("relayrl")

_TRANSITION_COLUMNS = (Columns.OBS, Columns.ACTIONS, Columns.REWARDS)
_EPISODE_ROWS_PER_READ = 32


def shuffle_rows(config) -> int:
    """Rows the reader shuffles among: iter_batches_kwargs' local_shuffle_buffer_size, else shuffle_buffer_size
    ('auto': max(16 train batches, 4096))."""
    local = (config.iter_batches_kwargs or {}).get("local_shuffle_buffer_size")
    if local is not None:
        return int(local)
    size = config.shuffle_buffer_size
    if size == "auto":
        return max(16 * config.train_batch_size_per_learner, 4096)
    return int(size)


def required_columns(config) -> Tuple[str, ...]:
    """Columns every file must hold (after input_read_schema's renames)."""
    if config.input_read_episodes:
        return (ITEM_COLUMN,)
    needed = _TRANSITION_COLUMNS if config.ignore_final_observation else _TRANSITION_COLUMNS + (Columns.NEXT_OBS,)
    return needed


def reader_renames(config) -> Dict[str, str]:
    """{column in the files: RLlib's column} from input_read_schema ({RLlib's column: column in the files})."""
    return {theirs: ours for ours, theirs in config.input_read_schema.items()}


class RowHandler:
    """Rows -> the Learner's update input: checks, decompression, the pre-learner; episode rows -> episodes."""

    def __init__(self, config, spaces, learner=None, *, num_rows=None):
        """`num_rows`: the dataset's rows where known (a whole pass of episode rows without steps is refused)."""
        self.config = config
        self.spaces = spaces
        self.prelearner = (config.prelearner_class or OfflinePreLearner)(config=config, spaces=spaces, learner=learner)
        self._episodes = EpisodeBatcher(max_empty_rows=num_rows)

    def transitions(self, rows: RowBatch) -> Dict[str, Any]:
        return self.prelearner(self.checked_columns(rows))

    def checked_columns(self, rows: RowBatch) -> Dict[str, Any]:
        """The columns of transition `rows`, decompressed, checked against the spaces, with RLlib's defaults for
        missing flags and next observations."""
        cfg = self.config
        obs_space, act_space = self.spaces
        row_checks.decompress(rows, cfg.input_compress_columns)
        columns = rows.columns
        if Columns.TERMINATEDS not in columns:
            if "dones" not in columns:
                raise OfflineDataError(f"offline data: {rows.where(0)}: no column 'terminateds' (nor RLlib's old "
                                       "'dones'); name yours with input_read_schema={'terminateds': '...'}.")
            columns[Columns.TERMINATEDS] = columns["dones"]
        if Columns.TRUNCATEDS not in columns:
            columns[Columns.TRUNCATEDS] = np.zeros(len(rows), bool)
        if cfg.ignore_final_observation or Columns.NEXT_OBS not in columns:
            columns[Columns.NEXT_OBS] = np.zeros_like(columns[Columns.OBS])
        if obs_space is not None:
            row_checks.conform_observations(rows, Columns.OBS, obs_space)
            row_checks.conform_observations(rows, Columns.NEXT_OBS, obs_space)
        if act_space is not None:
            row_checks.conform_actions(rows, act_space)
        row_checks.conform_rewards_and_flags(rows)
        return columns

    def episodes(self, rows: RowBatch) -> list:
        obs_space, act_space = self.spaces
        episodes = []
        for i, blob in enumerate(rows.columns[ITEM_COLUMN]):
            try:
                episode = episode_from_state(decode_episode_state(blob), obs_space, act_space)
            except EpisodeRowError as error:
                raise OfflineDataError(f"offline data: {rows.where(i)}, column 'item': the episode {error}.") from None
            if episode.agent_id is not None:
                raise OfflineDataError(f"offline data: {rows.where(i)}, column 'item': the episode is agent "
                                       f"{episode.agent_id!r}'s part of a multi-agent episode: {MULTI_AGENT_FIX}")
            row_checks.check_episode(rows, i, episode, obs_space, act_space)
            if not self.config.prelearner_use_recorded_module_states:
                # RLlib's default: the recording module's recurrent states are not the trained module's; each
                # sequence starts from the trained module's initial state.
                for column in (Columns.STATE_IN, Columns.STATE_OUT):
                    episode.extra_model_outputs.pop(column, None)
            episodes.append(as_module_episode(episode, self.prelearner.module_id))
        return episodes

    def episode_batch(self, num_timesteps: int, next_rows) -> Dict[str, Any]:
        """Exactly `num_timesteps` steps of episode rows; `next_rows(n)` reads n more rows."""
        rows_per_read = self.config.input_read_batch_size or _EPISODE_ROWS_PER_READ
        return {"episodes": self._episodes.batch(num_timesteps,
                                                 lambda: self.episodes_with_origins(next_rows(rows_per_read)))}

    def episodes_with_origins(self, rows: RowBatch) -> list:
        """(episode, (file index, row in the file, 0)) per row of episode rows."""
        origins = zip(rows.file_index.tolist(), rows.row_in_file.tolist())
        return [(episode, (f, r, 0)) for episode, (f, r) in zip(self.episodes(rows), origins)]

    def update_input(self, num_timesteps: int, next_rows) -> Dict[str, Any]:
        """The Learner's update input for `num_timesteps` timesteps read with `next_rows(n)`."""
        if self.config.input_read_episodes:
            return self.episode_batch(num_timesteps, next_rows)
        return self.transitions(next_rows(num_timesteps))


def reads_sample_batch_json(config, files) -> bool:
    """Whether `files` are RLlib's old-stack SampleBatch JSON lines (all named *.json / *.jsonl, or
    input_read_method='read_json' / input_read_sample_batches=True say so); a mix with parquet is refused."""
    json_files = [f for f in files if is_json_file(f)]
    if json_files and len(json_files) < len(files):
        raise ValueError(f"input_ mixes JSON ({json_files[0]}) and other files "
                         f"({next(f for f in files if not is_json_file(f))}); read one format at a time.")
    if config.input_read_episodes and (json_files or config.input_read_method == "read_json"):
        raise ValueError("input_read_episodes=True reads parquet episode rows; RLlib's old-stack JSON holds "
                         "SampleBatches: set input_read_episodes=False.")
    return bool(json_files) or config.input_read_method == "read_json" or config.input_read_sample_batches


def make_reader(config) -> RowStream:
    """The embedded reader of config.input_: parquet files, RLlib's old-stack JSON, or a Minari dataset
    ('minari://<id>')."""
    from relayrl.offline.minari_bridge import MinariEpisodes, minari_dataset_ids

    dataset_ids = minari_dataset_ids(config.input_)
    if dataset_ids:
        if config.input_read_episodes:
            raise ValueError("Minari datasets are read as transition rows: set input_read_episodes=False.")
        source = MinariEpisodes(dataset_ids, normalize_actions=config.normalize_actions)
    else:
        filesystem, files = input_files(config.input_, filesystem=config.input_filesystem,
                                        filesystem_kwargs=config.input_filesystem_kwargs)
        if reads_sample_batch_json(config, files):
            source = SampleBatchJsonFiles(filesystem, files, required=required_columns(config),
                                          rename=reader_renames(config),
                                          columns=(config.input_read_method_kwargs or {}).get("columns"))
        else:
            source = ParquetFiles(filesystem, files, required=required_columns(config), rename=reader_renames(config),
                                  columns=(config.input_read_method_kwargs or {}).get("columns"))
    return RowStream(source, shuffle_rows=shuffle_rows(config), seed=config.seed,
                     materialize=config.materialize_data)


class OfflineData:
    """The embedded reader and row handling of an offline algorithm (RLlib's `OfflineData`)."""

    _RAY_DATA_ONLY = ("map_batches_kwargs", "input_read_method_kwargs", "iter_batches_kwargs")

    def __init__(self, config, spaces, learner=None):
        self.config = config
        self.reader = make_reader(config)
        self.rows = RowHandler(config, spaces, learner, num_rows=self.reader.num_rows)
        obs_space = spaces[0]
        if isinstance(obs_space, gym.spaces.Box) and not config.input_read_episodes:  # (names a file of other rows)
            self.reader.expected_shapes = {Columns.OBS: obs_space.shape, Columns.NEXT_OBS: obs_space.shape}
        self._warn_unused(config)

    def _warn_unused(self, config) -> None:
        unused = {name: dict(getattr(config, name)) for name in self._RAY_DATA_ONLY if getattr(config, name)}
        unused.get("input_read_method_kwargs", {}).pop("columns", None)
        unused.get("iter_batches_kwargs", {}).pop("local_shuffle_buffer_size", None)
        unused = {k: v for k, v in unused.items() if v}
        if unused:
            logger.warning("offline data is read embedded (pyarrow): %s tune Ray Data, which reads only with "
                           "input_reader='ray_data' or remote Learners; they have no effect here.", unused)

    @property
    def num_rows(self) -> int:
        return self.reader.num_rows

    def sample(self, num_timesteps: int) -> Dict[str, Any]:
        """The Learner's update input for the next `num_timesteps` timesteps."""
        return self.rows.update_input(num_timesteps, self.reader.next_batch)

    # -- the reader's position (checkpoints: relayrl/offline/reader_position.py) -------------------
    def get_state(self) -> Dict[str, Any]:
        """Where the pass over the data is: the reader's position and the episodes carried into the next batch
        (episode rows), named by their origin."""
        carried = self.rows._episodes.carried
        if any(origin is None for origin in carried):  # rows of unknown origin are never read embedded
            raise RuntimeError("an episode of unknown origin is carried into the next batch.")
        columns = np.asarray(carried, dtype=np.int64).reshape(-1, 3)
        return {"reader": self.reader.get_state(),
                "carried_episodes": {"file_index": columns[:, 0].copy(), "row_in_file": columns[:, 1].copy(),
                                     "steps_done": columns[:, 2].copy()}}

    def check_state(self, state, where) -> None:
        from relayrl.checkpoints.state_checks import check_mapping, require

        check_mapping(state, where, known=("reader", "carried_episodes"), required=("reader", "carried_episodes"),
                      owner="the offline data")
        self.reader.check_state(state["reader"], where / "reader")
        carried = check_mapping(state["carried_episodes"], where / "carried_episodes", owner="the carried episodes",
                                known=("file_index", "row_in_file", "steps_done"),
                                required=("file_index", "row_in_file", "steps_done"))
        arrays = list(carried.values())
        ok = all(isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind in "iu" and len(a) == len(arrays[0])
                 for a in arrays)
        require(ok, where / "carried_episodes", "expected three 1-d int arrays of the same length.")
        labels = len(self.reader.source.files)
        require(not len(arrays[0]) or (carried["file_index"].min() >= 0 and carried["file_index"].max() < labels
                                       and carried["row_in_file"].min() >= 0 and carried["steps_done"].min() >= 0),
                where / "carried_episodes", f"origins outside the {labels} input file(s).")
        require(not len(arrays[0]) or self.config.input_read_episodes, where / "carried_episodes",
                "the checkpoint's run read episode rows (input_read_episodes=True), this one transition rows.")

    def set_state(self, state) -> None:
        """Read the carried episodes and the reader's pool again, then set both (a failed read changes nothing)."""
        from relayrl.offline.reader_position import read_rows, restored_stream

        carried = state["carried_episodes"]
        pairs = []
        if len(carried["file_index"]):
            rows = read_rows(self.reader.source, carried["file_index"], carried["row_in_file"])
            for (episode, origin), done in zip(self.rows.episodes_with_origins(rows), carried["steps_done"].tolist()):
                pairs.append((episode.slice(slice(done, None)) if done else episode, (origin[0], origin[1], done)))
        attributes = restored_stream(self.reader, state["reader"])
        for name, value in attributes.items():
            setattr(self.reader, name, value)
        self.rows._episodes.set_carried(pairs)

    def update_learners(self, learner_group, *, num_iters: Optional[int], timesteps, on_update) -> int:
        """`num_iters` updates (None: 1), each on train_batch_size_per_learner timesteps per Learner read here (the
        LearnerGroup shards them over remote Learners); `on_update(n)` after each. Returns the timesteps trained."""
        n = self.config.train_batch_size_per_learner * max(learner_group.num_learners, 1)
        for _ in range(num_iters or 1):
            learner_group.update(**self.sample(n), timesteps=timesteps(), num_epochs=1, minibatch_size=n,
                                 shuffle_batch_per_epoch=False, reduce_metrics=False)
            on_update(n)
        return n * (num_iters or 1)


__all__ = ["OfflineData", "RowHandler", "make_reader", "shuffle_rows", "required_columns", "reader_renames"]
