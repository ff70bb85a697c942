"""`Trajectory`: one agent's rows of one episode, collected as lists, then one SampleBatch."""
from typing import Any

import numpy as np

from relayrl.policy.sample_batch import SampleBatch


class Trajectory:
    """Rows of one (episode, agent); `to_batch()` stacks them into a SampleBatch and starts over."""

    def __init__(self, eps_id: int, agent_index: int, env_id: int, unroll_id: int):
        self.eps_id, self.agent_index, self.env_id, self.unroll_id = eps_id, agent_index, env_id, unroll_id
        self.t0 = 0
        self.columns: dict[str, list[Any]] = {}
        self._lists = None  # column_lists' cache: (columns dict, keys, lists)

    def __len__(self) -> int:
        rows = self.columns.get(SampleBatch.REWARDS)
        return 0 if rows is None else len(rows)

    def add(self, row: dict[str, Any]) -> None:
        columns = self.columns
        for key, value in row.items():
            column = columns.get(key)
            if column is None:
                column = columns[key] = []
            column.append(value)

    def column_lists(self, keys: tuple) -> list[list[Any]]:
        """The lists of the columns `keys` (missing ones created empty, in this order) to append a row to;
        cached while `columns` is the same dict (to_batch and checkpoint restores replace it)."""
        cached = self._lists
        if cached is not None and cached[0] is self.columns and cached[1] is keys:
            return cached[2]
        lists = [self.columns.setdefault(key, []) for key in keys]
        self._lists = (self.columns, keys, lists)
        return lists

    def to_batch(self, unroll_id: int) -> SampleBatch:
        n = len(self)
        batch = {key: (values if key == SampleBatch.INFOS else _stack(values)) for key, values in self.columns.items()}
        batch[SampleBatch.T] = np.arange(self.t0, self.t0 + n)
        batch[SampleBatch.EPS_ID] = np.full(n, self.eps_id, dtype=np.int64)
        batch[SampleBatch.AGENT_INDEX] = np.full(n, self.agent_index, dtype=np.int64)
        batch[SampleBatch.ENV_ID] = np.full(n, self.env_id, dtype=np.int64)
        batch[SampleBatch.UNROLL_ID] = np.full(n, unroll_id, dtype=np.int64)
        self.t0 += n
        self.columns = {}
        return SampleBatch(batch)


# np.array of numbers, or of arrays of one shape, is np.stack's array (dtype and shape) without its per-row calls
_ARRAY_ROWS = (np.ndarray, np.generic, float, int, bool)


def _stack(values: list[Any]):
    if isinstance(values[0], _ARRAY_ROWS):
        try:
            stacked = np.array(values)
        except (ValueError, TypeError, OverflowError):
            stacked = None
        if stacked is not None and stacked.dtype != object:
            return stacked
    try:
        return np.stack([np.asarray(v) for v in values])
    except ValueError:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
