"""n-step returns by following "next step" pointers through transition storage.

Storage holds one transition per slot and `next_index[slot]`, the slot of the same episode's next
step (-1 at the episode's end or while the continuation is unknown). Looking n steps ahead is then
n - 1 vectorised pointer hops for the whole batch.
"""
from typing import Tuple, Union

import numpy as np


def n_step_lookahead(start: np.ndarray, n: Union[int, np.ndarray], next_index: np.ndarray, rewards: np.ndarray,
                     gamma: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Discounted n-step reward sums starting at slots `start`.

    Args:
        start: int array (B,) of slots.
        n: steps to sum, an int or an int array (B,) (>= 1 each).
        next_index: int array over all slots; -1 where the episode does not (yet) continue.
        rewards: float array over all slots.
        gamma: discount.

    Returns:
        (last, returns, steps): the slot of the last step summed (its next observation is the
        bootstrap observation and its done flags are the row's), the float32 sums
        r_t + g r_{t+1} + ... + g^(steps-1) r_{t+steps-1}, and `steps` (int64, 1 <= steps <= n).
    """
    num = len(start)
    if not np.isscalar(n):
        n = np.asarray(n)
    max_n = (n if np.isscalar(n) else int(n.max())) if num else 1
    if max_n == 1:
        return start, rewards[start].astype(np.float32), np.ones(num, np.int64)
    # hops[k] = slot k steps after start; -1 once the episode ended (hops after a -1 are garbage,
    # masked out by the running AND below). A few whole-batch gathers instead of per-row loops.
    hops = np.empty((max_n, num), np.int64)
    hops[0] = start
    for k in range(1, max_n):
        hops[k] = next_index[hops[k - 1]]
    valid = np.logical_and.accumulate(hops >= 0, axis=0)
    if not np.isscalar(n):
        valid &= np.arange(max_n)[:, None] < n
    steps = valid.sum(0)
    last = hops[steps - 1, np.arange(num)]
    discounts = np.float32(gamma) ** np.arange(max_n, dtype=np.float32)
    returns = discounts @ np.where(valid, rewards[hops], np.float32(0.0))
    return last, returns.astype(np.float32, copy=False), steps
