"""APPO's `CircularBuffer`: each batch is trained on up to `iterations_per_batch` times, newest batches first out
of room last.

`put(batch)` stores the batch K times (K = iterations_per_batch) and never blocks: once N·K slots
(N = num_batches) are taken, the oldest fall off. `get()` takes one stored slot uniformly at random
and removes it, so a batch is used at most K times, or fewer if newer batches push it out. The
queue-like methods let the learner thread read from it as from a `queue.Queue`.
"""
import collections
import queue
import threading
import time
from typing import Any

import numpy as np


class CircularBuffer:
    def __init__(self, num_batches: int, iterations_per_batch: int, seed=None):
        self.num_batches, self.iterations_per_batch = num_batches, iterations_per_batch
        self._slots: collections.deque = collections.deque(maxlen=num_batches * iterations_per_batch)
        self._rng = np.random.default_rng(seed)
        # A condition, not a polling loop: the learner thread sleeps until a batch arrives instead of
        # waking thousands of times a second for the GIL that the driver and the runners need.
        self._ready = threading.Condition(threading.Lock())
        self.num_dropped = 0  # slots pushed out before they were used (lifetime)

    def put(self, item: Any, block: bool = True, timeout=None) -> None:
        with self._ready:
            for _ in range(self.iterations_per_batch):
                if len(self._slots) == self._slots.maxlen:
                    self.num_dropped += 1
                self._slots.append(item)
            self._ready.notify()

    put_nowait = put

    def get(self, block: bool = True, timeout=None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._ready:
            while not self._slots:
                left = None if deadline is None else deadline - time.monotonic()
                if not block or (left is not None and left <= 0):
                    raise queue.Empty
                self._ready.wait(left)
            index = int(self._rng.integers(len(self._slots)))
            item = self._slots[index]
            del self._slots[index]
            return item

    def qsize(self) -> int:
        return len(self._slots)

    def empty(self) -> bool:
        return not self._slots

    def full(self) -> bool:
        return False  # never: putting drops the oldest slots instead of blocking

    def task_done(self) -> None:
        pass


__all__ = ["CircularBuffer"]
