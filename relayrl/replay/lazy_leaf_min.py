"""The smallest stored priority^alpha (the importance weights' normaliser), kept without a min tree.

A min tree costs a second tree update per priority update (~30 us for 64 rows, ~75 us for 256 on this
machine's CPU). The minimum only rises when the slot holding it is rewritten, which happens rarely (it is the
least likely transition to be drawn, and is overwritten once per trip around the buffer). So: keep the value,
lower it on writes, forget it when a write touches a slot at or below it, and rescan the stored leaves then.
Exact, like the tree: the same value as a min tree at every sample.
"""
from typing import Optional

import numpy as np


class LazyLeafMin:
    """Min over `leaves[:num_stored]`; `leaves` is the sum tree's leaf level (never-stored leaves hold 0)."""

    def __init__(self, leaves: np.ndarray):
        self._leaves = leaves
        self._value: Optional[float] = None  # None: unknown, rescan on the next read

    def before_write(self, slots) -> None:
        """Call before `leaves[slots]` change (slots: an index array or a slice)."""
        if self._value is None:
            return
        old = self._leaves[slots]
        if ((old <= self._value) & (old > 0.0)).any():  # the minimum may leave; 0 is a never-stored leaf
            self._value = None

    def after_write(self, slots) -> None:
        """Call after `leaves[slots]` changed: the new values can only lower a known minimum."""
        if self._value is not None:
            self._value = min(self._value, float(self._leaves[slots].min()))

    def forget(self) -> None:
        self._value = None

    def value(self, num_stored: int) -> float:
        if self._value is None:
            self._value = float(self._leaves[:num_stored].min())
        return self._value
