"""RLlib's old-stack offline data: JSON lines, each a SampleBatch (what `output=...` wrote on RLlib's old API stack).

A line is `{"type": "SampleBatch", "obs": ..., "actions": [...], ...}`: one column per key, each a list with the
rows first, or RLlib's compressed cell (base64 text of an LZ4 frame of a pickled array, relayrl/offline/
compression.py) holding the whole column. `dones` is the old name of `terminateds`. A `MultiAgentBatch` line
(`policy_batches`) with one policy is that policy's SampleBatch; with several it is refused (multi-agent data).

The files are scanned once up front (rows counted, every line checked to parse); each pass then parses them again,
line by line, so memory holds one line's batch at a time. A bad line is reported with its file, line and column.
"""
import json
from typing import Dict, List, Optional, Sequence

import numpy as np

from relayrl.offline.compression import CompressedValueError, is_compressed, pack, unpack
from relayrl.offline.files import JSON_SUFFIXES
from relayrl.offline.reader import MULTI_AGENT_FIX, OfflineDataError, RowBatch

# Old-stack bookkeeping columns with no meaning for a transition row (view requirements, sampler ids, infos).
_DROPPED = {"type", "infos", "prev_actions", "prev_rewards", "seq_lens", "unroll_id", "count"}


def is_json_file(path: str) -> bool:
    return path.lower().endswith(JSON_SUFFIXES)


class SampleBatchJsonFiles:
    """The row source (`num_rows`, `chunks(rng)`) of old-stack SampleBatch JSON `files` on a pyarrow filesystem.

    `required`: columns every line must hold (after `rename`, {file column: RLlib column}; `dones` counts as
    `terminateds`). Each row's origin is 'file F, line L' and its row in that line's batch."""

    def __init__(self, filesystem, files: Sequence[str], *, required: Sequence[str] = (),
                 rename: Optional[Dict[str, str]] = None):
        self.filesystem = filesystem
        self.paths = list(files)
        self._rename = dict(rename or {})
        self._required = [c for c in required if c != "terminateds"]
        self.files: List[str] = []  # per line with rows: 'PATH, line L' (RowBatch.where names it)
        self._lines: List[List[int]] = []  # per path: the line numbers holding rows, and their label index
        self._labels: List[List[int]] = []
        self.num_rows = 0
        for index in range(len(self.paths)):
            lines, labels = [], []
            for number, columns in self._parse(index):
                labels.append(len(self.files))
                lines.append(number)
                self.files.append(f"{self.paths[index]}, line {number}")
                self.num_rows += _num_rows(columns)
            self._lines.append(lines)
            self._labels.append(labels)
        if self.num_rows == 0:
            raise OfflineDataError(f"the offline dataset is empty: its {len(self.paths)} JSON file(s) hold no "
                                   f"SampleBatch rows (first: {self.paths[0]}).")

    def chunks(self, rng=None):
        """One RowBatch per line of one pass (files in a random order when `rng` is given)."""
        order = list(range(len(self.paths)))
        if rng is not None:
            rng.shuffle(order)
        for index in order:
            labels = dict(zip(self._lines[index], self._labels[index]))
            for number, columns in self._parse(index):
                n = _num_rows(columns)
                arrays = {name: self._array(index, number, name, value, n) for name, value in columns.items()}
                yield RowBatch(arrays, np.full(n, labels[number], dtype=np.int32), np.arange(n, dtype=np.int64),
                               self.files)

    def _parse(self, index: int):
        """(line number, {RLlib column: raw value}) of each line of file `index` that holds rows."""
        path = self.paths[index]
        try:
            stream = self.filesystem.open_input_stream(path)
        except Exception as error:
            raise OfflineDataError(f"file {path} cannot be opened ({type(error).__name__}: {error}).") from None
        with stream:
            text = stream.read().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"file {path}, line {number}"
            try:
                record = json.loads(line)
            except ValueError as error:
                raise OfflineDataError(f"{where}: not a JSON object ({error}); the file may be truncated (a writer "
                                       "stopped mid-line): remove the line or re-record the file.") from None
            columns = self._columns(where, record)
            if _num_rows(columns):
                yield number, columns

    def _columns(self, where: str, record) -> Dict[str, object]:
        if not isinstance(record, dict):
            raise OfflineDataError(f"{where}: a JSON {type(record).__name__}, not a SampleBatch object "
                                   "({'type': 'SampleBatch', 'obs': ..., ...}).")
        kind = record.get("type", "SampleBatch")
        if kind == "MultiAgentBatch":
            batches = record.get("policy_batches") or {}
            if len(batches) != 1:
                raise OfflineDataError(f"{where}: a MultiAgentBatch of {len(batches)} policies "
                                       f"({sorted(batches)[:4]}): {MULTI_AGENT_FIX}")
            record = next(iter(batches.values()))
        elif kind != "SampleBatch":
            raise OfflineDataError(f"{where}: type {kind!r}; RLlib's old-stack JSON holds 'SampleBatch' or "
                                   "'MultiAgentBatch' lines.")
        columns = {}
        for name, value in record.items():
            name = self._rename.get(name, name)
            if name in _DROPPED or name.startswith(("state_in_", "state_out_")):
                continue
            columns["terminateds" if name == "dones" else name] = value
        missing = [c for c in self._required if c not in columns]
        if missing:
            renames = {v: k for k, v in self._rename.items()}
            raise OfflineDataError(
                f"{where}: no column {', '.join(repr(renames.get(c, c)) for c in missing)} (its columns: "
                f"{sorted(record)}). Name your columns in config.offline_data(input_read_schema="
                "{'obs': 'your_obs_column', ...}).")
        return columns

    def _array(self, index: int, number: int, name: str, value, num_rows: int) -> np.ndarray:
        where = f"file {self.paths[index]}, line {number}, column {name!r}"
        if is_compressed(value):
            try:
                value = unpack(value)
            except CompressedValueError as error:
                raise OfflineDataError(f"{where}: a compressed cell that cannot be read: {error}.") from None
        try:
            array = np.asarray(value)
        except ValueError:
            raise OfflineDataError(f"{where}: rows of different shapes (a ragged list).") from None
        if array.ndim == 0 or len(array) != num_rows:
            raise OfflineDataError(f"{where}: {array.shape[0] if array.ndim else 'a scalar, not'} rows, but the "
                                   f"line's other columns hold {num_rows}.")
        return array


def sample_batch_line(columns: Dict[str, np.ndarray], compress_columns: Sequence[str] = ("obs", "new_obs")) -> str:
    """One line of RLlib's old-stack JSON: a SampleBatch of `columns` (rows first), `compress_columns` packed as
    RLlib's JsonWriter packs them (its default: obs, new_obs)."""
    record = {"type": "SampleBatch"}
    for name, values in columns.items():
        record[name] = pack(values) if name in compress_columns else np.asarray(values).tolist()
    return json.dumps(record)


def _num_rows(columns: Dict[str, object]) -> int:
    """Rows of one line: the length of its first list column (compressed cells are unpacked only if all are)."""
    for value in columns.values():
        if isinstance(value, list):
            return len(value)
    for value in columns.values():
        if is_compressed(value):
            try:
                return len(unpack(value))
            except (CompressedValueError, TypeError):
                continue
    return 0


__all__ = ["SampleBatchJsonFiles", "is_json_file", "sample_batch_line"]
