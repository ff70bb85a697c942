"""The embedded reader: parquet files -> batches of rows (numpy columns), streaming, shuffled.

Memory holds the shuffle pool and one record batch of one file, never the dataset (unless materialize_data):
files are opened one after the other, each read record batch by record batch. Each pass over the files takes
them in a new order (shuffling on); rows mix in a pool of `shuffle_rows` rows that is permuted whenever it is
refilled. Every row keeps its origin (file, row in the file), so a bad value is reported where it is.
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from relayrl.offline.arrow_columns import ColumnTypeError, column_to_numpy
from relayrl.offline.deps import require


_READ_ROWS = 4096  # rows per record batch read from a file
_AGENT_ID = "agent_id"

MULTI_AGENT_FIX = ("reading multi-agent recordings is not supported yet (recording them is). Train one "
                   "single-agent module per module of the recording: `from relayrl.offline.split_by_module import "
                   "split_by_module; folders = split_by_module(input_, output_folder)` writes one single-agent "
                   "dataset per module (its rows without the agent), to read with input_=folders[module_id].")


class OfflineDataError(ValueError):
    """Bad offline data: the message names the file (and the row and column where one is at fault)."""


def check_required_columns(where: str, required, present, rename: dict, listed, hint: str = "") -> None:
    """OfflineDataError naming the `required` columns missing from `present` (RLlib's names, after `rename`, {file
    column: RLlib column}) as the file calls them; `listed`: the columns to show, `hint`: a further fix."""
    missing = [c for c in required if c not in present]
    if missing:
        renames = {v: k for k, v in rename.items()}
        raise OfflineDataError(
            f"{where}: no column {', '.join(repr(renames.get(c, c)) for c in missing)} (its columns: {listed}). "
            "Name your columns in config.offline_data(input_read_schema={'obs': 'your_obs_column', ...})." + hint)


@dataclass
class RowBatch:
    """Rows from the files: {column: array with the rows first}, and where each row came from."""

    columns: Dict[str, np.ndarray]
    file_index: np.ndarray  # per row: index into `files`
    row_in_file: np.ndarray  # per row: its row number in that file (0-based)
    files: Sequence[str]

    def __len__(self) -> int:
        return len(self.file_index)

    def where(self, i: int) -> str:
        """'file F, row R' of this batch's row i (row numbers are unknown (-1) for rows read through Ray Data)."""
        row = int(self.row_in_file[i])
        return f"file {self.files[int(self.file_index[i])]}" + (f", row {row}" if row >= 0 else "")

    def take(self, indices) -> "RowBatch":
        return RowBatch({k: v[indices] for k, v in self.columns.items()}, self.file_index[indices],
                        self.row_in_file[indices], self.files)


def check_alike(batches: List[RowBatch], expected: Optional[Dict[str, tuple]] = None) -> None:
    """OfflineDataError where a batch (from another file) lacks a column the first has, or holds it in another row
    shape: pooled with the others, its rows would fail to stack, or (shuffled) be cut or zero-padded silently.
    `expected`: {column: row shape} the spaces give (observations): the batch that differs from it is named."""
    first = batches[0]
    for column, shape in (expected or {}).items():
        for batch in batches:
            values = batch.columns.get(column)
            if values is not None and values.dtype != object and values.shape[1:] != tuple(shape):
                if all(b.columns.get(column) is None or b.columns[column].shape[1:] == values.shape[1:]
                       for b in batches):
                    break  # one shape throughout: the row checks name it against the space
                raise OfflineDataError(
                    f"offline data: {batch.where(0)}, column {column!r}: rows of shape {list(values.shape[1:])}, "
                    f"but the space has shape {list(shape)} (as other files' rows); remove or re-record the file.")
    for batch in batches[1:]:
        for column, values in first.columns.items():
            other = batch.columns.get(column)
            if other is None:
                raise OfflineDataError(
                    f"offline data: {batch.where(0)}: no column {column!r}, which {first.where(0)} has; every file "
                    "must hold the same columns: re-record it, or read only the columns all files hold "
                    "(config.offline_data(input_read_method_kwargs={'columns': [...]})).")
            if other.shape[1:] != values.shape[1:]:
                raise OfflineDataError(
                    f"offline data: {batch.where(0)}, column {column!r}: rows of shape {list(other.shape[1:])}, but "
                    f"{first.where(0)} holds rows of shape {list(values.shape[1:])}; every file must hold the same "
                    "shapes: remove or re-record the file that does not fit the spaces.")


def concatenate(batches: List[RowBatch], expected: Optional[Dict[str, tuple]] = None) -> RowBatch:
    if len(batches) == 1:
        return batches[0]
    check_alike(batches, expected)
    first = batches[0]
    return RowBatch({k: np.concatenate([b.columns[k] for b in batches]) for k in first.columns},
                    np.concatenate([b.file_index for b in batches]), np.concatenate([b.row_in_file for b in batches]),
                    first.files)


def shuffled_concatenate(batches: List[RowBatch], rng, expected: Optional[Dict[str, tuple]] = None) -> RowBatch:
    """The batches' rows in a random order: each row is copied once, straight to its new place."""
    check_alike(batches, expected)
    total = sum(len(b) for b in batches)
    places = rng.permutation(total)

    def scatter(parts):
        out = np.empty((total,) + parts[0].shape[1:], dtype=np.result_type(*parts))
        start = 0
        for part in parts:
            part = np.ascontiguousarray(part, dtype=out.dtype)  # (both sides seen alike by _rows_as_items)
            _rows_as_items(out)[places[start:start + len(part)]] = _rows_as_items(part)
            start += len(part)
        return out

    first = batches[0]
    return RowBatch({k: scatter([b.columns[k] for b in batches]) for k in first.columns},
                    scatter([b.file_index for b in batches]), scatter([b.row_in_file for b in batches]), first.files)


def _rows_as_items(array: np.ndarray) -> np.ndarray:
    """A C-contiguous array of rows with several numbers each, seen as one opaque item per row: numpy's fancy
    indexing then moves each row in one step (a pool's scatter of 4-float rows: 122 -> 36 us per 8192 rows)."""
    row_bytes = array.dtype.itemsize * int(np.prod(array.shape[1:]))
    if array.ndim < 2 or array.dtype.hasobject or not array.flags.c_contiguous or not row_bytes:
        return array
    return array.view(np.dtype((np.void, row_bytes))).reshape(len(array))


def file_order(num_files: int, rng=None) -> List[int]:
    """The order one pass reads the files in: as listed, or shuffled with `rng`."""
    order = list(range(num_files))
    if rng is not None:
        rng.shuffle(order)
    return order


class RowStream:
    """An endless stream of row batches from `source` (see `RowSource` in reader_position.py: `num_rows`,
    `num_units` and `unit_chunks(unit)`, the RowBatch chunks of one file), pass after pass: batches come out of a
    pool of `shuffle_rows` rows, permuted whenever it is refilled (0: no shuffling); with `materialize` all rows are
    read into memory once. `get_state()` / `set_state()` hold where the pass is (relayrl/offline/reader_position.py).
    """

    def __init__(self, source, *, shuffle_rows: int = 0, seed: Optional[int] = None, materialize: bool = False):
        self.source = source
        self._shuffle_rows = int(shuffle_rows)
        self._rng = np.random.default_rng(seed)
        self.num_rows = source.num_rows
        self.passes = 0  # completed passes over the source
        # The cursor: the unit (file) order of this pass (None: the next pass has not started; its order is drawn
        # when its first chunk is needed), the unit being read and how many of its rows were handed out.
        self._order: Optional[List[int]] = None
        self._unit_position = 0
        self._rows_done = 0
        self._unit_chunks = None  # the open unit's remaining chunks (None: open it on the next chunk)
        self._pool: Optional[RowBatch] = None
        self._pool_start = 0
        self.expected_shapes: Dict[str, tuple] = {}  # {column: row shape} from the spaces (check_alike)
        self._memory: Optional[RowBatch] = self._read_all() if materialize else None

    @property
    def shuffles(self) -> bool:
        return bool(self._shuffle_rows)

    def _next_chunk(self) -> RowBatch:
        """The next chunk of the pass (the next pass begins, in a new order, when this one ends)."""
        while True:
            if self._order is None:
                self._order = file_order(self.source.num_units, self._rng if self._shuffle_rows else None)
                self._unit_position, self._rows_done, self._unit_chunks = 0, 0, None
            if self._unit_position >= len(self._order):
                self.passes += 1
                self._order = None
                continue
            if self._unit_chunks is None:  # (a restored cursor skips the rows handed out before)
                self._unit_chunks = _after_rows(self.source.unit_chunks(self._order[self._unit_position]),
                                                self._rows_done)
            chunk = next(self._unit_chunks, None)
            if chunk is None:
                self._unit_position, self._rows_done, self._unit_chunks = self._unit_position + 1, 0, None
                continue
            self._rows_done += len(chunk)
            return chunk

    def _read_all(self) -> RowBatch:
        chunks, seen = [], 0
        while seen < self.num_rows:
            chunk = self._next_chunk()
            chunks.append(chunk)
            seen += len(chunk)
        return concatenate(chunks, self.expected_shapes)

    def next_batch(self, num_rows: int) -> RowBatch:
        """The next `num_rows` rows (the stream goes on into the next pass when this one ends)."""
        if self._memory is not None:
            indices = self._rng.integers(0, len(self._memory), num_rows) if self._shuffle_rows else \
                (np.arange(num_rows) + self._pool_start) % len(self._memory)
            self._pool_start = (self._pool_start + num_rows) % len(self._memory)
            return self._memory.take(indices)
        low_water = max(self._shuffle_rows // 2, num_rows)
        if self._pool is None or len(self._pool) - self._pool_start < low_water:
            self._refill(num_rows)
        batch = self._pool.take(slice(self._pool_start, self._pool_start + num_rows))
        self._pool_start += num_rows
        return batch

    def _refill(self, num_rows: int) -> None:
        """Top the pool up to `shuffle_rows` (at least one batch) of rows and permute it (when shuffling)."""
        rest = [] if self._pool is None or self._pool_start >= len(self._pool) else [
            self._pool.take(slice(self._pool_start, None))]
        have = sum(len(r) for r in rest)
        target = max(self._shuffle_rows, num_rows)
        while have < target:
            chunk = self._next_chunk()
            rest.append(chunk)
            have += len(chunk)
        pool = shuffled_concatenate(rest, self._rng, self.expected_shapes) if self._shuffle_rows else \
            concatenate(rest, self.expected_shapes)
        self._pool, self._pool_start = pool, 0

    # -- the position (checkpoints) --------------------------------------------------------------
    def get_state(self) -> Dict:
        from relayrl.offline.reader_position import stream_state

        return stream_state(self)

    def check_state(self, state, where) -> None:
        from relayrl.offline.reader_position import check_stream_state

        check_stream_state(self, state, where)

    def set_state(self, state) -> None:
        """Continue the pass where `state` (checked with check_state) left it: the stored pool's rows are read
        again from the files first, then everything is set at once."""
        from relayrl.offline.reader_position import restored_stream

        for name, value in restored_stream(self, state).items():
            setattr(self, name, value)


def _after_rows(chunks, rows: int):
    """The chunks of a unit after its first `rows` rows (the chunk holding that boundary cut there)."""
    for chunk in chunks:
        if rows >= len(chunk):
            rows -= len(chunk)
            continue
        yield chunk.take(slice(rows, None)) if rows else chunk
        rows = 0


class ParquetFiles:
    """The row source of parquet `files`, read with pyarrow.

    `required`: columns every file must have (after `rename`, {file column: RLlib column}); `columns`: read only
    these (None: all). Every file's footer is read once up front (its columns checked, its rows counted) and kept.
    """

    def __init__(self, filesystem, files: Sequence[str], *, required: Sequence[str] = (),
                 rename: Optional[Dict[str, str]] = None, columns: Optional[Sequence[str]] = None):
        self._pq = require("pyarrow.parquet", "reading offline data")
        self.filesystem = filesystem
        self.files = list(files)
        self._rename = dict(rename or {})
        self._required = list(required)
        self._columns = None if columns is None else list(columns)
        self._metadata = [self._open(index).metadata for index in range(len(self.files))]  # footers, read once
        self.num_rows = sum(metadata.num_rows for metadata in self._metadata)
        if self.num_rows == 0:
            raise OfflineDataError(f"the offline dataset is empty: its {len(self.files)} file(s) hold no rows "
                                   f"(first: {self.files[0]}).")

    def _open(self, index: int, metadata=None):
        """The file as a pyarrow ParquetFile (its footer read, or the one read before), its columns checked."""
        path = self.files[index]
        try:
            parquet = self._pq.ParquetFile(self.filesystem.open_input_file(path), metadata=metadata)
        except Exception as error:
            raise OfflineDataError(f"file {path} is not a readable parquet file ({type(error).__name__}: {error}); "
                                   "it may be truncated (a writer stopped mid-file) or not parquet: remove it "
                                   "or re-record it.") from None
        if metadata is None:
            self._check_schema(index, parquet.schema_arrow)
            self._check_single_agent(index, parquet)
        return parquet

    def _check_schema(self, index: int, schema) -> None:
        names = [self._rename.get(name, name) for name in schema.names]
        check_required_columns(f"file {self.files[index]}", self._required, names, self._rename, schema.names,
                               " Or, for episode rows, set input_read_episodes=True.")

    def _check_single_agent(self, index: int, parquet) -> None:
        """Multi-agent transition rows name their agent; single-agent ones hold none (an all-null column, which the
        footer's types and statistics tell without reading any rows)."""
        names = [self._rename.get(name, name) for name in parquet.schema_arrow.names]
        if _AGENT_ID not in names:
            return
        column = names.index(_AGENT_ID)
        if require("pyarrow", "reading offline data").types.is_null(parquet.schema_arrow.field(column).type):
            return
        metadata = parquet.metadata
        for group in range(metadata.num_row_groups):
            chunk = metadata.row_group(group).column(column)
            stats = chunk.statistics
            if stats is None or not stats.has_null_count or stats.null_count != metadata.row_group(group).num_rows:
                raise OfflineDataError(f"file {self.files[index]} holds multi-agent rows (its column "
                                       f"{parquet.schema_arrow.names[column]!r} names agents): {MULTI_AGENT_FIX}")

    def chunks(self, rng=None):
        """The RowBatch chunks of one pass (files in a random order when `rng` is given)."""
        for index in file_order(len(self.files), rng):
            yield from self.unit_chunks(index)

    @property
    def num_units(self) -> int:
        return len(self.files)

    def unit_chunks(self, index: int):
        """The RowBatch chunks of file `index` (one per record batch that holds rows)."""
        for columns, first in self._file_chunks(index):
            n = len(next(iter(columns.values()))) if columns else 0
            if n:
                yield RowBatch(columns, np.full(n, index, dtype=np.int32),
                               np.arange(first, first + n, dtype=np.int64), self.files)

    def units_of(self, file_index: np.ndarray) -> np.ndarray:
        """The units (files) that rows with these `RowBatch.file_index` values are read from."""
        return np.asarray(file_index)

    def fingerprint(self) -> List[list]:
        """[path, bytes, rows] per file: what a stored position is checked against before it is used."""
        infos = self.filesystem.get_file_info(self.files)
        return [[path, int(info.size), int(metadata.num_rows)]
                for path, info, metadata in zip(self.files, infos, self._metadata)]

    def _file_chunks(self, index: int):
        """(numpy columns, first row) per record batch of one file."""
        parquet = self._open(index, self._metadata[index])
        columns = self._file_columns(parquet.schema_arrow)
        first = 0
        try:
            for record_batch in parquet.iter_batches(batch_size=_READ_ROWS, columns=columns, use_threads=False):
                yield self._to_numpy(index, record_batch), first
                first += record_batch.num_rows
        except OfflineDataError:
            raise
        except Exception as error:
            raise OfflineDataError(f"file {self.files[index]}: reading failed after row {first} "
                                   f"({type(error).__name__}: {error}); the file may be truncated or corrupt: "
                                   "remove it or re-record it.") from None

    def _file_columns(self, schema) -> Optional[List[str]]:
        if self._columns is None:
            return None
        return [name for name in schema.names if self._rename.get(name, name) in self._columns]

    def _to_numpy(self, index: int, record_batch) -> Dict[str, np.ndarray]:
        out = {}
        schema = record_batch.schema
        for i, name in enumerate(schema.names):
            try:
                out[self._rename.get(name, name)] = column_to_numpy(record_batch.column(i), schema.field(i),
                                                                    record_batch.num_rows)
            except ColumnTypeError as error:
                raise OfflineDataError(f"file {self.files[index]}, column {name!r}: {error}.") from None
        return out


__all__ = ["RowStream", "ParquetFiles", "RowBatch", "OfflineDataError", "concatenate", "file_order"]
