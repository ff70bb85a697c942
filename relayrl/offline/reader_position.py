"""Where an embedded reader (reader.RowStream) is in its pass over the data, as checkpoint data.

A resumed run must read what the uninterrupted one would have read next, so the position holds: the unit (file)
order of this pass, the unit being read and how many of its rows were handed out, the completed passes, the
shuffle generator's state, and the rows waiting in the shuffle pool. Pool rows are stored as where they came from
(RowBatch.file_index, row_in_file: 12 bytes a row, ~48 KB for the default 4096-row pool), not as row data: a
restore reads them again from their files. With materialize_data, the memory's file order and the next row.

A position fits only the data it was taken on: it stores each input file's [path, bytes, rows] (`fingerprint()`)
and a restore into a run reading other files (another list, other sizes or row counts) is refused before anything
changes, with the fix (`RESTART_FIX`); a position is never used to seek into other data.

A row source (ParquetFiles, SampleBatchJsonFiles, MinariEpisodes) has `num_rows`, `files` (RowBatch labels),
`num_units` and `unit_chunks(unit)` (the RowBatch chunks of one file / episode, in a fixed order),
`units_of(file_index)` and `fingerprint()`.
"""
from typing import Any, Dict, List

import numpy as np

from relayrl.checkpoints.state_checks import (
    Where,
    check_generator_state,
    check_int,
    check_mapping,
    require,
)
from relayrl.offline.reader import OfflineDataError, RowBatch, concatenate

STATE_VERSION = 1
_KEYS = ("version", "files", "shuffle_rows", "materialized", "rng", "passes", "order", "unit_position",
         "rows_done", "pool_file_index", "pool_row_in_file", "memory_position")
RESTART_FIX = ("To start the data pass over instead (everything else is restored), set "
               "config.offline_data(input_restore_position=False) (with Algorithm.from_checkpoint: "
               "config_overrides={'input_restore_position': False}); to take only the weights and optimizer, "
               "algo.restore_from_path(path, component='learner_group').")


def stream_state(stream) -> Dict[str, Any]:
    """The position of `stream` (a RowStream): plain data and two small int arrays."""
    pool, start = stream._pool, stream._pool_start
    remaining = None if pool is None else slice(start, None)
    return {
        "version": STATE_VERSION,
        "files": stream.source.fingerprint(),
        "shuffle_rows": stream._shuffle_rows,
        "materialized": stream._memory is not None,
        "rng": stream._rng.bit_generator.state,
        "passes": stream.passes,
        "order": None if stream._order is None else [int(u) for u in stream._order],
        "unit_position": stream._unit_position,
        "rows_done": stream._rows_done,
        "pool_file_index": np.asarray(pool.file_index[remaining] if pool is not None else [], dtype=np.int32),
        "pool_row_in_file": np.asarray(pool.row_in_file[remaining] if pool is not None else [], dtype=np.int64),
        "memory_position": int(start) if stream._memory is not None else 0,
    }


def check_stream_state(stream, state: Any, where: Where) -> None:
    """CheckpointError naming the key (and, for other input files, the difference and the fix); changes nothing."""
    check_mapping(state, where, known=_KEYS, required=_KEYS, owner="the offline data reader")
    require(state["version"] == STATE_VERSION, where / "version",
            f"reader position format {state['version']!r}; this relayrl reads {STATE_VERSION}.")
    _check_same_files(stream.source.fingerprint(), state["files"], where / "files")
    require(state["shuffle_rows"] == stream._shuffle_rows, where / "shuffle_rows",
            f"the checkpoint's reader shuffled among {state['shuffle_rows']!r} rows, this one among "
            f"{stream._shuffle_rows}: set the same shuffle_buffer_size. " + RESTART_FIX)
    require(state["materialized"] == (stream._memory is not None), where / "materialized",
            f"materialize_data was {state['materialized']!r} in the checkpoint's run: set it so. " + RESTART_FIX)
    check_generator_state(state["rng"], where / "rng")
    check_int(state["passes"], where / "passes", low=0)
    order = state["order"]
    units = stream.source.num_units
    require(order is None or (isinstance(order, list) and sorted(order) == list(range(units))), where / "order",
            f"expected None or an order of the {units} input unit(s), found {str(order)[:80]}.")
    check_int(state["unit_position"], where / "unit_position", low=0)
    require(order is None or state["unit_position"] <= len(order), where / "unit_position",
            f"{state['unit_position']} is past the {len(order or [])} units of the pass.")
    check_int(state["rows_done"], where / "rows_done", low=0)
    _check_pool(stream, state, where)
    check_int(state["memory_position"], where / "memory_position", low=0)
    require(state["memory_position"] < max(stream.num_rows, 1), where / "memory_position",
            f"row {state['memory_position']} of {stream.num_rows}.")


def _check_same_files(live: List[list], stored: Any, where: Where) -> None:
    require(isinstance(stored, list), where, f"expected a list, found {type(stored).__name__}.")
    stored = [list(entry) if isinstance(entry, (list, tuple)) else entry for entry in stored]
    if stored == live:
        return
    if len(stored) != len(live):
        difference = f"the checkpoint's run read {len(stored)} input file(s), this one reads {len(live)}"
    else:
        old, new = next((a, b) for a, b in zip(stored, live) if a != b)
        difference = (f"input file {len(stored) and stored.index(old)}: {_describe(old)} in the checkpoint, "
                      f"{_describe(new)} now")
    raise where.error(f"the offline data differs from the data this position was taken on ({difference}); the "
                      "stored position would seek into other data. " + RESTART_FIX)


def _describe(entry: Any) -> str:
    if isinstance(entry, list) and len(entry) == 3:
        return f"{entry[0]} ({'' if entry[1] is None else f'{entry[1]} bytes, '}{entry[2]} rows)"
    return repr(entry)


def _check_pool(stream, state: Dict[str, Any], where: Where) -> None:
    labels = len(stream.source.files)
    for key in ("pool_file_index", "pool_row_in_file"):
        value = state[key]
        require(isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu", where / key,
                f"expected a 1-d int array, found {type(value).__name__}.")
    file_index, rows = state["pool_file_index"], state["pool_row_in_file"]
    require(len(file_index) == len(rows), where / "pool_row_in_file",
            f"{len(rows)} rows, but pool_file_index holds {len(file_index)}.")
    require(not len(file_index) or (file_index.min() >= 0 and file_index.max() < labels), where / "pool_file_index",
            f"indices outside the {labels} input file(s).")
    require(not len(rows) or rows.min() >= 0, where / "pool_row_in_file", "negative row numbers.")


def restored_stream(stream, state: Dict[str, Any]) -> Dict[str, Any]:
    """{attribute: value} that put `stream` at the checked `state`: files are read here (the pool's rows, or the
    materialized rows in another order), nothing is set."""
    from relayrl.checkpoints.codec import make_generator

    order = None if state["order"] is None else [int(u) for u in state["order"]]
    attributes = {"_rng": make_generator(state["rng"]), "passes": int(state["passes"]), "_order": order,
                  "_unit_position": int(state["unit_position"]), "_rows_done": int(state["rows_done"]),
                  "_unit_chunks": None}
    if state["materialized"]:
        same = order == stream._order
        memory = stream._memory if same else concatenate([c for u in order for c in stream.source.unit_chunks(u)])
        attributes.update(_memory=memory, _pool=None, _pool_start=int(state["memory_position"]))
    else:
        file_index, rows = state["pool_file_index"], state["pool_row_in_file"]
        pool = read_rows(stream.source, file_index, rows) if len(file_index) else None
        attributes.update(_pool=pool, _pool_start=0)
    return attributes


def read_rows(source, file_index: np.ndarray, row_in_file: np.ndarray) -> RowBatch:
    """The rows at these origins, in this order (a row may be there several times: a pool larger than the data
    holds rows of several passes), read again from their units (each read once, up to its last wanted row)."""
    keys = (np.asarray(file_index, dtype=np.int64) << 40) | np.asarray(row_in_file, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    parts, places = [], []
    units = source.units_of(file_index)
    for unit in np.unique(units):
        wanted = len(np.unique(keys[units == unit]))
        found = 0
        for chunk in source.unit_chunks(int(unit)):
            chunk_keys = (chunk.file_index.astype(np.int64) << 40) | chunk.row_in_file.astype(np.int64)
            left = np.searchsorted(sorted_keys, chunk_keys, side="left")
            counts = np.searchsorted(sorted_keys, chunk_keys, side="right") - left
            if counts.any():
                total = int(counts.sum())
                starts = np.repeat(left, counts)
                offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
                parts.append(chunk.take(np.repeat(np.arange(len(chunk)), counts)))
                places.append(order[starts + offsets])
                found += int(np.count_nonzero(counts))
            if found >= wanted:
                break
    got = sum(len(p) for p in places)
    if got != len(keys):
        raise OfflineDataError(f"the offline data changed while a reader position was restored: {len(keys) - got} "
                               f"of the {len(keys)} stored pool rows are no longer in the files. " + RESTART_FIX)
    rows = concatenate(parts)
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[np.concatenate(places)] = np.arange(len(keys))
    return rows.take(inverse)


__all__ = ["stream_state", "check_stream_state", "restored_stream", "read_rows", "RESTART_FIX", "STATE_VERSION"]
