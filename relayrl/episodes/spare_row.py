"""A spare row behind a finalized column of big rows (images), for the one step a Learner appends.

PPO's and IMPALA's Learners add one artificial step to every episode chunk (AddOneTsToEpisodesAndTruncate:
the last observation again, for the bootstrap value). Appended to a finalized numpy column that is a copy
of the whole column: ~30 MB per PPO Pong batch, the biggest host copy left between the sampler and a GPU
Learner. So when InfiniteLookbackBuffer finalizes a column whose rows are big and that has enough rows for
one more to cost little (at most 1/MIN_ROWS of its memory), it allocates one row more than it needs
(`concatenate_with_spare_row`), and the first `append` writes into that row (`append_into_spare_row`).

The spare row belongs to the buffer that made it: the buffer keeps it only while its data is still the
view it made (any other change of the data drops it), copies and pickles do not carry it, and a view taken
of the data before the append never sees the new row (its rows end before it).
"""
import math
from typing import Optional, Sequence, Tuple

import numpy as np

MIN_ROW_BYTES = 4096  # an 84x84 frame is 7 KB (28 KB stacked); CartPole's row is 16 bytes
MIN_ROWS = 32  # the spare row costs at most ~3% of the column


def concatenate_with_spare_row(parts: Sequence[np.ndarray]) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """(np.concatenate(parts), the array it is the first rows of, or None where a spare row does not pay).

    The last part is the batch of new rows; small rows leave at once (this runs for every column of every
    episode chunk the EnvRunner hands over).
    """
    last = parts[-1]
    if getattr(last, "ndim", 0) < 2 or last.itemsize * math.prod(last.shape[1:]) < MIN_ROW_BYTES:
        return (np.concatenate(parts) if len(parts) > 1 else np.array(last)), None
    row_shape, dtype = last.shape[1:], np.result_type(*parts)
    rows = sum(len(part) for part in parts)
    if rows < MIN_ROWS or dtype.kind not in "biufc" or any(np.shape(part)[1:] != row_shape for part in parts):
        return np.concatenate(parts), None
    room = np.empty((rows + 1,) + row_shape, dtype)
    np.concatenate(parts, out=room[:rows])
    return room[:rows], room


def stack_with_spare_row(items: list) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Row items (a running chunk's observations) stacked with a spare row behind them; None where a spare
    row does not pay (the caller stacks as before)."""
    first = items[0] if items else None
    if type(first) is not np.ndarray or first.nbytes < MIN_ROW_BYTES or len(items) < MIN_ROWS:
        return None
    data, room = concatenate_with_spare_row([np.asarray(item)[None] for item in items])
    return None if room is None else (data, room)


def append_into_spare_row(data, room: Optional[np.ndarray], item) -> Optional[np.ndarray]:
    """`data` with `item` as one more row, written into `room`'s spare row; None where that is not possible
    (no room, `data` is no longer the view the room was made for, or the item would change the dtype or
    shape that np.concatenate would give)."""
    if room is None or not isinstance(data, np.ndarray) or data.base is not room:
        return None
    if data.ctypes.data != room.ctypes.data or len(data) >= len(room):
        return None
    item = np.asarray(item)
    if item.shape != data.shape[1:] or np.result_type(data, item) != data.dtype:
        return None
    room[len(data)] = item
    return room[:len(data) + 1]

