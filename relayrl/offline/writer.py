"""Recording: the EnvRunners' sampled episodes -> parquet files in RLlib's layout (`config.offline_data(output=...)`).

Each EnvRunner with `output` set hands its sample() results to its own `OfflineWriter` (training and evaluation
runners alike, local and remote, single- and multi-agent: a multi-agent episode is written as its agents'
episodes, each row naming its agent and module). Files go to

    <output>/<env class, lower case>/run-<worker index:06d>-<write number:05d>/<uuid>_000000_000000.parquet

with RLlib's columns: one row per timestep (eps_id, agent_id, module_id, obs, actions, rewards, new_obs,
terminateds, truncateds, and each extra model output), or one row per episode (`item`: the msgpack'd episode
state) with output_write_episodes=True (RLlib's default, and relayrl's).

A file is written under a hidden name and renamed when complete, so a crash loses at most the rows not yet
written (the buffer and the file in progress); readers never see a partial file.
"""
import logging
import uuid
from typing import Dict, List, Optional

import numpy as np

from relayrl.core.columns import Columns
from relayrl.offline.arrow_columns import numpy_to_column
from relayrl.offline.compression import pack
from relayrl.offline.deps import require
from relayrl.offline.episode_rows import ITEM_COLUMN, encode_episode, single_agent_episodes
from relayrl.offline.files import output_location

logger = logging.getLogger("relayrl")


def env_subdir(env_runner) -> str:
    """RLlib's sub-folder of a runner's recordings: its (first) sub-env's class name, lower case."""
    try:
        return env_runner.foreach_env(lambda env: type(getattr(env, "unwrapped", env)).__name__)[0].lower()
    except (ValueError, IndexError, AttributeError):
        env = env_runner.config.env
        if env is None:  # an external simulator's episodes (EnvRunnerServerForExternalInference has no env)
            return "external_env"
        return (env if isinstance(env, str) else getattr(env, "__name__", type(env).__name__)).lower()


class OfflineWriter:
    """Buffers an EnvRunner's episodes as rows and writes them to parquet files (see the module docstring)."""

    def __init__(self, config, *, worker_index: int, subdir: str):
        self._pq = require("pyarrow.parquet", "recording offline data (config.offline_data(output=...))")
        self._pa = require("pyarrow", "recording offline data")
        self.filesystem, base = output_location(config.output, filesystem=config.output_filesystem,
                                                filesystem_kwargs=config.output_filesystem_kwargs)
        self.folder = f"{base.rstrip('/')}/{subdir}"
        self.worker_index = worker_index
        self.write_episodes = config.output_write_episodes
        self.compress = set(config.output_compress_columns) | (
            {Columns.NEXT_OBS} if Columns.OBS in config.output_compress_columns else set())
        self.max_rows = config.output_max_rows_per_file
        self.max_bytes = config.output_max_file_size
        self.write_remaining = config.output_write_remaining_data
        self.write_kwargs = dict(config.output_write_method_kwargs)
        self._buffer: List[Dict[str, np.ndarray]] = []  # column blocks, in order
        self._rows = 0
        self._bytes = 0
        self.num_writes = 0
        self.files: List[str] = []  # the files written so far

    # -- rows ------------------------------------------------------------------------------------
    def write(self, episodes) -> None:
        """Buffer the rows of these episodes (as sample() returned them); write every file that is full."""
        for episode in single_agent_episodes(episodes):
            if not len(episode):
                continue
            block = {ITEM_COLUMN: np.array([encode_episode(episode)], dtype=object)} if self.write_episodes \
                else self._transition_rows(episode)
            self._buffer.append(block)
            n = len(next(iter(block.values())))
            self._rows += n
            self._bytes += sum(_nbytes(v) for v in block.values())
        if self.max_rows is None:
            if self._rows:
                self._flush(self._rows)
            return
        while self._rows >= self.max_rows or (self._rows and self._bytes >= self.max_bytes):
            self._flush(min(self.max_rows, self._rows))

    def _transition_rows(self, episode) -> Dict[str, np.ndarray]:
        n = len(episode)
        observations = episode.get_observations()
        if isinstance(observations, (dict, tuple)):
            raise ValueError("transition rows hold Box or Discrete observations; record episodes with Dict or Tuple "
                             "observations as episode rows: config.offline_data(output_write_episodes=True).")
        observations = np.asarray(observations)
        done = np.zeros(n, dtype=bool)
        terminateds, truncateds = done.copy(), done.copy()
        terminateds[-1], truncateds[-1] = bool(episode.is_terminated), bool(episode.is_truncated)
        eps_id = episode.multi_agent_episode_id or episode.id_
        rows = {
            Columns.EPS_ID: np.full(n, str(eps_id), dtype=object),
            Columns.AGENT_ID: np.full(n, episode.agent_id, dtype=object),
            Columns.MODULE_ID: np.full(n, episode.module_id, dtype=object),
            Columns.OBS: observations[:n],
            Columns.ACTIONS: np.asarray(episode.get_actions()),
            Columns.REWARDS: np.asarray(episode.get_rewards(), dtype=np.float64),
            Columns.NEXT_OBS: observations[1:n + 1],
            Columns.TERMINATEDS: terminateds,
            Columns.TRUNCATEDS: truncateds,
        }
        for key in episode.extra_model_outputs:
            values = episode.get_extra_model_outputs(key)
            if not isinstance(values, (dict, tuple)):  # (recurrent states: left out, as RLlib's rows do)
                rows[key] = np.asarray(values)
        for column in self.compress & set(rows):
            rows[column] = np.array([pack(value) for value in rows[column]], dtype=object)
        return rows

    # -- files -----------------------------------------------------------------------------------
    def _flush(self, num_rows: int) -> None:
        """Write the first `num_rows` buffered rows to one new file."""
        blocks, taken = [], 0
        while taken < num_rows:
            block = self._buffer[0]
            n = len(next(iter(block.values())))
            if taken + n <= num_rows:
                blocks.append(self._buffer.pop(0))
                taken += n
            else:
                cut = num_rows - taken
                blocks.append({k: v[:cut] for k, v in block.items()})
                self._buffer[0] = {k: v[cut:] for k, v in block.items()}
                taken = num_rows
        self._rows -= num_rows
        self._bytes = sum(_nbytes(v) for block in self._buffer for v in block.values())
        columns = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
        self._write_file(columns)

    def _write_file(self, columns: Dict[str, np.ndarray]) -> None:
        pa = self._pa
        arrays, fields = [], []
        for name, values in columns.items():
            array, metadata = numpy_to_column(values)
            arrays.append(array)
            fields.append(pa.field(name, array.type, metadata=metadata))
        table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        self.num_writes += 1
        folder = f"{self.folder}/run-{self.worker_index:06d}-{self.num_writes:05d}"
        name = f"{uuid.uuid4().hex}_000000_000000.parquet"
        self.filesystem.create_dir(folder, recursive=True)
        partial, final = f"{folder}/.{name}.partial", f"{folder}/{name}"
        with self.filesystem.open_output_stream(partial) as stream:
            self._pq.write_table(table, stream, **self.write_kwargs)
        self.filesystem.move(partial, final)
        self.files.append(final)
        logger.debug("recorded %d rows to %s", table.num_rows, final)

    def close(self) -> None:
        """At the EnvRunner's stop(): write the rest of the buffer (output_write_remaining_data)."""
        if self._rows and self.write_remaining:
            self._flush(self._rows)
        elif self._rows:
            logger.warning("offline recording: %d buffered rows of EnvRunner %d are not written "
                           "(output_write_remaining_data=False).", self._rows, self.worker_index)
        self._buffer, self._rows, self._bytes = [], 0, 0


def _nbytes(values: np.ndarray) -> int:
    if values.dtype == object:
        return sum(len(v) if isinstance(v, (bytes, str)) else 8 for v in values)
    return values.nbytes


def writer_for(env_runner) -> Optional[object]:
    """The recorder of an EnvRunner whose config has `output` (parquet or Minari), else None."""
    config = env_runner.config
    if config.output is None:
        return None
    from relayrl.offline.minari_bridge import MinariWriter, minari_output_id

    dataset_id = minari_output_id(config.output)
    if dataset_id is not None:
        if config.is_multi_agent:
            raise ValueError("output='minari://...' records single-agent episodes; record multi-agent episodes to "
                             "parquet (output=<folder>).")
        obs_space, act_space = env_runner.get_spaces()["__env_single__"]
        env_spec = config.env if isinstance(config.env, str) else None
        return MinariWriter(dataset_id, env_spec=env_spec, observation_space=obs_space, action_space=act_space,
                            normalize_actions=config.normalize_actions, clip_actions=config.clip_actions)
    return OfflineWriter(config, worker_index=env_runner.worker_index, subdir=env_subdir(env_runner))


__all__ = ["OfflineWriter", "writer_for", "env_subdir"]
