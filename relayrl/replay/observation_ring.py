"""ObservationRing: a FIFO ring of observation rows, indexed by lifetime row id, that grows on demand.

A chunk of L steps brings L + 1 observations (its last one is the next observation of its last
step), so transitions share rows instead of storing obs and next obs separately: step t reads row
r and its next observation is row r + 1. The ring must hold every row from the oldest stored
transition's row on; with many short chunks that can exceed its size, and then it grows (a rare
copy of the live rows).
"""
from typing import Any, Dict, List

import numpy as np


def storage_dtype(array: np.ndarray) -> np.dtype:
    """float64 -> float32 (what the learner uses); everything else as given."""
    return np.dtype(np.float32) if array.dtype == np.float64 else array.dtype


class ObservationRing:
    def __init__(self, initial_capacity: int):
        self.capacity = int(initial_capacity)
        self.num_added = 0  # lifetime rows
        self.leaves: List[np.ndarray] = []

    def append(self, rows: List[np.ndarray], write_from: int, oldest_needed: int) -> None:
        """Add rows (one array per leaf) with ids num_added, num_added + 1, ...

        Rows before index `write_from` are not needed (their transitions were dropped at once) and
        are not written; `oldest_needed` is the smallest row id still referenced after this append.
        """
        count = len(rows[0])
        if not self.leaves:
            self.leaves = [np.zeros((self.capacity,) + leaf.shape[1:], storage_dtype(leaf)) for leaf in rows]
        needed = self.num_added + count - oldest_needed
        if needed > self.capacity:
            self._grow(max(needed, self.capacity + self.capacity // 2), oldest_needed)
        ids = np.arange(self.num_added + write_from, self.num_added + count) % self.capacity
        for store, new in zip(self.leaves, rows):
            store[ids] = new[write_from:]
        self.num_added += count

    def _grow(self, capacity: int, oldest_needed: int) -> None:
        live = np.arange(max(oldest_needed, self.num_added - self.capacity), self.num_added)
        grown = []
        for leaf in self.leaves:
            new = np.zeros((capacity,) + leaf.shape[1:], leaf.dtype)
            new[live % capacity] = leaf[live % self.capacity]
            grown.append(new)
        self.leaves, self.capacity = grown, capacity

    def gather(self, row_ids: np.ndarray) -> List[np.ndarray]:
        positions = row_ids % self.capacity
        return [leaf[positions] for leaf in self.leaves]

    def check_shapes(self, rows: List[np.ndarray]) -> None:
        for stored, new in zip(self.leaves, rows):
            if stored.shape[1:] != new.shape[1:]:
                raise ValueError(f"Replay buffer: observation shape {new.shape[1:]} differs from the stored "
                                 f"{stored.shape[1:]}. Use one buffer per observation space.")

    # ---- state -------------------------------------------------------------------------------

    def get_state(self, oldest_needed: int) -> Dict[str, Any]:
        first = max(0, oldest_needed)
        ids = np.arange(first, self.num_added)
        return {"capacity": self.capacity, "num_added": self.num_added, "first_row": first,
                "leaves": [leaf[ids % self.capacity] for leaf in self.leaves]}

    def set_state(self, state: Dict[str, Any]) -> None:
        self.capacity, self.num_added = int(state["capacity"]), int(state["num_added"])
        ids = np.arange(int(state["first_row"]), self.num_added) % self.capacity
        self.leaves = []
        for rows in state["leaves"]:
            rows = np.asarray(rows)
            leaf = np.zeros((self.capacity,) + rows.shape[1:], rows.dtype)
            leaf[ids] = rows
            self.leaves.append(leaf)
