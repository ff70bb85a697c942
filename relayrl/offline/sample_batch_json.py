"""RLlib's old-stack offline data: JSON lines, each a SampleBatch (what `output=...` wrote on RLlib's old API stack).

A line is `{"type": "SampleBatch", "obs": ..., "actions": [...], ...}`: one column per key, each a list with the
rows first, or RLlib's compressed cell (base64 text of an LZ4 frame of a pickled array, relayrl/offline/
compression.py) holding the whole column. `dones` is the old name of `terminateds`. A line without `type` is one
transition (its values that row's cells, as Ray Data's `write_json` writes transition rows). A `MultiAgentBatch` line
(`policy_batches`) with one policy is that policy's SampleBatch; with several it is refused (multi-agent data).

The files are scanned once up front (rows counted, every line checked to parse); each pass then parses them again,
a file at a time: memory holds one file's text (RLlib's JsonWriter rolled files over at 64 MB) and the batches of
its lines as they are handed out. A bad line is reported with its file, line and column.
"""
import json
from typing import Dict, List, Optional, Sequence

import numpy as np

from relayrl.offline.compression import CompressedValueError, is_compressed, pack, unpack
from relayrl.offline.files import JSON_SUFFIXES
from relayrl.offline.reader import MULTI_AGENT_FIX, OfflineDataError, RowBatch, check_required_columns

# Old-stack bookkeeping columns with no meaning for a transition row (view requirements, sampler ids, infos).
_DROPPED = {"type", "infos", "prev_actions", "prev_rewards", "seq_lens", "unroll_id", "count"}


def is_json_file(path: str) -> bool:
    return path.lower().endswith(JSON_SUFFIXES)


class LineParser:
    """One JSON line -> its columns ({RLlib column: raw value}, then arrays), checked; errors name `where`.

    `required`: columns every line must hold (after `rename`, {file column: RLlib column}; `dones` counts as
    `terminateds`); `columns`: keep only these (RLlib's names; None: all), as the parquet reader's
    `input_read_method_kwargs={'columns': [...]}`."""

    def __init__(self, *, required: Sequence[str] = (), rename: Optional[Dict[str, str]] = None,
                 columns: Optional[Sequence[str]] = None):
        self.rename = dict(rename or {})
        self.required = [c for c in required if c != "terminateds"]
        self.keep = None if columns is None else set(columns)

    def raw_columns(self, line: str, where: str) -> Dict[str, object]:
        """The line's columns as they are in the JSON ({} for a blank line)."""
        if not line.strip():
            return {}
        try:
            record = json.loads(line)
        except ValueError as error:
            raise OfflineDataError(f"{where}: not a JSON object ({error}); the file may be truncated (a writer "
                                   "stopped mid-line): remove the line or re-record the file.") from None
        if not isinstance(record, dict):
            raise OfflineDataError(f"{where}: a JSON {type(record).__name__}, not a SampleBatch object "
                                   "({'type': 'SampleBatch', 'obs': ..., ...}).")
        kind = record.get("type")
        if kind is None:  # one transition per line (e.g. Ray Data's write_json of transition rows)
            record = {name: [value] for name, value in record.items()}
        elif kind == "MultiAgentBatch":
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
            name = self.rename.get(name, name)
            if name in _DROPPED or name.startswith(("state_in_", "state_out_")):
                continue
            name = "terminateds" if name == "dones" else name
            if self.keep is None or name in self.keep:
                columns[name] = value
        check_required_columns(where, self.required, columns, self.rename, sorted(record))
        return columns

    @staticmethod
    def arrays(columns: Dict[str, object], where: str) -> Dict[str, np.ndarray]:
        """The raw columns as arrays with the rows first (compressed cells unpacked), all of the same length."""
        num_rows = _num_rows(columns)
        out = {}
        for name, value in columns.items():
            here = f"{where}, column {name!r}"
            if is_compressed(value):
                try:
                    value = unpack(value)
                except CompressedValueError as error:
                    raise OfflineDataError(f"{here}: a compressed cell that cannot be read: {error}.") from None
            try:
                array = np.asarray(value)
            except ValueError:
                raise OfflineDataError(f"{here}: rows of different shapes (a ragged list).") from None
            if array.ndim == 0 or len(array) != num_rows:
                raise OfflineDataError(f"{here}: {array.shape[0] if array.ndim else 'a scalar, not'} rows, but "
                                       f"the line's other columns hold {num_rows}.")
            out[name] = array
        return out


class SampleBatchJsonFiles:
    """The row source (reader_position.py's: `num_rows`, `num_units`, `unit_chunks(unit)`, ...) of old-stack
    SampleBatch JSON `files` on a pyarrow filesystem (`required`, `rename`: LineParser's). Each row's origin is
    'file F, line L' and its row in that line's batch."""

    def __init__(self, filesystem, files: Sequence[str], *, required: Sequence[str] = (),
                 rename: Optional[Dict[str, str]] = None, columns: Optional[Sequence[str]] = None):
        self.filesystem = filesystem
        self.paths = list(files)
        self._parser = LineParser(required=required, rename=rename, columns=columns)
        self.files: List[str] = []  # per line with rows: 'PATH, line L' (RowBatch.where names it)
        self._labels: List[Dict[int, int]] = []  # per path: {line number: its index in self.files}
        self._label_paths: List[int] = []  # per entry of self.files: the index of its path
        self._path_rows: List[int] = []  # rows per path
        self.num_rows = 0
        for index in range(len(self.paths)):
            labels, rows = {}, 0
            for number, columns in self._parse(index):
                labels[number] = len(self.files)
                self.files.append(f"{self.paths[index]}, line {number}")
                self._label_paths.append(index)
                rows += _num_rows(columns)
            self._labels.append(labels)
            self._path_rows.append(rows)
            self.num_rows += rows
        if self.num_rows == 0:
            raise OfflineDataError(f"the offline dataset is empty: its {len(self.paths)} JSON file(s) hold no "
                                   f"SampleBatch rows (first: {self.paths[0]}).")

    @property
    def num_units(self) -> int:
        return len(self.paths)

    def unit_chunks(self, index: int):
        """One RowBatch per line (that holds rows) of the file `index`."""
        for number, columns in self._parse(index):
            arrays = self._parser.arrays(columns, f"file {self.paths[index]}, line {number}")
            n = _num_rows(columns)
            yield RowBatch(arrays, np.full(n, self._labels[index][number], dtype=np.int32),
                           np.arange(n, dtype=np.int64), self.files)

    def units_of(self, file_index: np.ndarray) -> np.ndarray:
        """The files that rows with these `RowBatch.file_index` values (their lines) are read from."""
        return np.asarray(self._label_paths, dtype=np.int64)[np.asarray(file_index, dtype=np.int64)]

    def fingerprint(self) -> List[list]:
        """[path, bytes, rows] per file: what a stored position is checked against before it is used."""
        infos = self.filesystem.get_file_info(self.paths)
        return [[path, int(info.size), rows] for path, info, rows in zip(self.paths, infos, self._path_rows)]

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
            columns = self._parser.raw_columns(line, f"file {path}, line {number}")
            if _num_rows(columns):
                yield number, columns


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


__all__ = ["SampleBatchJsonFiles", "LineParser", "is_json_file", "sample_batch_line"]
