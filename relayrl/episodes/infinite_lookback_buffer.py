"""InfiniteLookbackBuffer: one column of episode data plus a "lookback" prefix.

The first `lookback` items are data from before ts=0 of this episode chunk
(e.g. the last observations of the predecessor chunk, needed for frame
stacking or recurrent state). Everything else addresses items relative to
ts=0, so connectors can index "the last n steps" without caring whether the
episode was cut into chunks.

Index semantics (shared by `get`, `set` and `pop`), for a buffer whose data is
`[L0, L1, d0, d1, d2]` with `lookback=2` (len 3):

- `i >= 0`                          -> ts i: `get(0) == d0`, `get(2) == d2`.
- `i < 0`                           -> from the end of *all* data:
  `get(-1) == d2`, `get(-4) == L1` (the end count may run into the lookback).
- `i < 0, neg_index_as_lookback`    -> before ts=0: `get(-1, neg_index_as_lookback=True) == L1`.
- slices: start/stop translate as above, then act like Python slices over
  the whole data: `get(slice(-2, None)) == [d1, d2]`,
  `get(slice(-2, 1), neg_index_as_lookback=True) == [L0, L1, d0]`,
  `get(slice(None, None)) == [d0, d1, d2]` (a missing start means ts=0).
- Positions outside the stored data raise IndexError for ints and are clipped
  for slices, unless `fill` is given: then each missing position yields a fill
  item, e.g. with data `[r0]` and no lookback
  `get(slice(-3, 1), neg_index_as_lookback=True, fill=0.0) == [0., 0., 0., r0]`
  and `get([-3, -2, -1], fill=0.0) == [0., 0., r0]`, while
  `get(slice(-4, 0), neg_index_as_lookback=True, fill=0.0) == [0., 0., 0., 0.]`
  (stop 0 is exclusive, so ts=0 is not included).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import gymnasium as gym
import numpy as np

from relayrl.core.tree import first_leaf, map_structure
from relayrl.episodes.spare_row import append_into_spare_row, concatenate_with_spare_row, stack_with_spare_row

Indices = Union[None, int, slice, Sequence[int], np.ndarray]


# ---- helpers for nested (dict / tuple) items -------------------------------
# dict and tuple are the only containers (what gymnasium's Dict/Tuple spaces
# sample); everything else is a leaf.


_NDARRAY_ONLY = {np.ndarray}


def _stack(items: Sequence) -> Any:
    """List of items -> one batched structure (per-leaf numpy stacking)."""
    first = items[0]
    if isinstance(first, dict):
        return {k: _stack([it[k] for it in items]) for k in first}
    if isinstance(first, tuple):
        return tuple(_stack([it[i] for it in items]) for i in range(len(first)))
    if not isinstance(first, np.ndarray):
        return np.asarray(items)
    if set(map(type, items)) == _NDARRAY_ONLY:
        # Plain arrays: np.array stacks them like np.stack (same shape check and dtype), in C
        # instead of np.stack's Python-level reshaping (3-4x faster for an episode's rows).
        return np.array(items)
    return np.stack(items)


def _concat(parts: Sequence) -> Any:
    return map_structure(lambda *leaves: np.concatenate(leaves), *parts)


def unbatch_items(batch) -> list:
    """Batched structure -> list of items (inverse of `_stack`): row views of arrays, per-item dicts/tuples."""
    if isinstance(batch, (dict, tuple)):
        return [map_structure(lambda a: a[i], batch) for i in range(len(first_leaf(batch)))]
    return list(batch)


def _batch_len(new_data) -> int:
    if isinstance(new_data, (list, tuple)):
        return len(new_data)
    return len(first_leaf(new_data))


def _as_items(new_data) -> list:
    """Items given by a user: a list/tuple of items, an array or a dict batch."""
    if isinstance(new_data, (list, tuple)):
        return list(new_data)
    return unbatch_items(new_data)


def struct_equal(a, b) -> bool:
    """Deep equality for nested dict/tuple/list/array data (NaN != NaN)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(struct_equal(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(struct_equal(x, y) for x, y in zip(a, b))
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a == b


def _empty_for_space(space: Optional[gym.Space]):
    """Zero-length batch matching `space` (so an empty column still has a shape)."""
    if isinstance(space, gym.spaces.Dict):
        return {k: _empty_for_space(s) for k, s in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(_empty_for_space(s) for s in space.spaces)
    if space is None or space.shape is None:
        return np.zeros((0,))
    return np.zeros((0,) + tuple(space.shape), dtype=space.dtype)


def _fill_for_space(space: gym.Space, fill, one_hot: bool):
    if isinstance(space, gym.spaces.Dict):
        return {k: _fill_for_space(s, fill, one_hot) for k, s in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(_fill_for_space(s, fill, one_hot) for s in space.spaces)
    if one_hot and isinstance(space, gym.spaces.Discrete):
        return np.zeros(int(space.n), dtype=np.float32)
    if one_hot and isinstance(space, gym.spaces.MultiDiscrete):
        return np.zeros(int(np.sum(space.nvec)), dtype=np.float32)
    if space.shape is None or space.dtype is None:
        return fill
    arr = np.full(space.shape, fill, dtype=space.dtype)
    return arr[()] if arr.ndim == 0 else arr  # 0-d -> numpy scalar


def _fill_like(x, fill):
    if isinstance(x, np.ndarray):
        return np.full_like(x, fill)
    if isinstance(x, np.generic):
        return x.dtype.type(fill)
    return fill


def _one_hot(x, space: gym.Space):
    """One-hot Discrete/MultiDiscrete leaves (any leading batch dims), float32."""
    if isinstance(space, gym.spaces.Discrete):
        idx = np.asarray(x, dtype=np.int64) - int(space.start)
        return np.eye(int(space.n), dtype=np.float32)[idx]
    if isinstance(space, gym.spaces.MultiDiscrete):
        idx = np.asarray(x, dtype=np.int64) - np.asarray(space.start, dtype=np.int64)
        nvec = np.asarray(space.nvec).reshape(-1)
        return np.concatenate(
            [np.eye(int(n), dtype=np.float32)[idx[..., i]] for i, n in enumerate(nvec)], axis=-1)
    if isinstance(space, gym.spaces.Dict):
        return {k: _one_hot(x[k], s) for k, s in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(_one_hot(x[i], s) for i, s in enumerate(space.spaces))
    return x


def _split(r: range, total: int):
    """Split positions `r` into (#missing before, in-range sub-range, #missing after).

    Works for either step sign; "before"/"after" refer to output order.
    """
    n = len(r)
    if n == 0:
        return 0, r, 0
    step, start = r.step, r.start
    if step > 0:
        lo = -(-(-start) // step)  # first k with start + k*step >= 0
        hi = -(-(total - start) // step)  # first k with start + k*step >= total
    else:
        lo = -(-(start - total + 1) // -step)  # first k with position < total
        hi = start // -step + 1  # first k with position < 0
    lo = min(max(lo, 0), n)
    hi = min(max(hi, lo), n)
    return lo, r[lo:hi], n - hi


def _to_slice(r: range) -> slice:
    if len(r) == 0:
        return slice(0, 0)
    end = r[-1] + r.step
    return slice(r[0], end if end >= 0 else None, r.step)


class InfiniteLookbackBuffer:
    """A list (while collecting) or numpy batch (after `finalize()`) of items,
    the first `lookback` of which precede ts=0. See the module docstring for the
    index semantics shared by `get`, `set` and `pop`.
    """

    _room: Optional[np.ndarray] = None  # a spare row behind big finalized rows (spare_row.py)

    def __init__(self, data=None, lookback: int = 0, space: Optional[gym.Space] = None):
        self.data = [] if data is None else data
        # Anything but a list (array, dict/tuple of arrays) is an already
        # batched, finalized column.
        self.finalized = not isinstance(self.data, list)
        lookback = int(lookback)
        if lookback < 0:
            raise ValueError(f"`lookback` must be >= 0, got {lookback}.")
        self.lookback = min(lookback, self._total()) if lookback else 0  # (a new episode's columns: 0, no count)
        self._space = space

    # ---- basic properties ---------------------------------------------------

    @property
    def space(self) -> Optional[gym.Space]:
        return self._space

    @space.setter
    def space(self, value: Optional[gym.Space]) -> None:
        self._space = value

    def _total(self) -> int:
        if isinstance(self.data, list):
            return len(self.data)
        return len(first_leaf(self.data))

    def __len__(self) -> int:
        return self._total() - self.lookback

    def len_incl_lookback(self) -> int:
        return self._total()

    def __repr__(self) -> str:
        return (f"InfiniteLookbackBuffer(len={len(self)}, lookback={self.lookback}, "
                f"finalized={self.finalized}, data={self.data!r})")

    def __eq__(self, other) -> bool:
        if not isinstance(other, InfiniteLookbackBuffer):
            return NotImplemented
        return (self.lookback == other.lookback and self.finalized == other.finalized
                and struct_equal(self.data, other.data))

    __hash__ = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_room", None)  # the data alone: a copy or pickle does not share (or ship) the spare row
        return state

    def __getitem__(self, item):
        """`buffer[i]` / `buffer[a:b]` == `buffer.get(i)` (ts-relative)."""
        return self.get(item)

    # ---- growing / shrinking --------------------------------------------------

    def append(self, item) -> None:
        if not self.finalized:
            self.data.append(item)
        elif self._total() == 0:
            self.data = _stack([item])
        else:
            grown = append_into_spare_row(self.data, self._room, item)
            self._room = None
            self.data = grown if grown is not None else map_structure(
                lambda a, x: np.concatenate([a, np.asarray(x)[None]]), self.data, item)

    def extend(self, items) -> None:
        """Append many items: a list/tuple of items or an already batched array/dict."""
        if not self.finalized:
            self.data.extend(_as_items(items))
            return
        if _batch_len(items) == 0:
            return
        batch = _stack(list(items)) if isinstance(items, (list, tuple)) else items
        if self._total() == 0:
            self.data = batch
        else:
            self.data = _concat([self.data, batch])

    def extend_finalized(self, batch: np.ndarray) -> None:
        """Append the rows of a plain array and finalize: the same data as `extend(list(batch))` then
        `finalize()`, in one concatenation instead of a round trip through per-item lists. The
        result is a new array, never a view of `batch`."""
        if isinstance(batch, dict):  # a nested column (e.g. a recurrent state): the same per leaf
            self._extend_finalized_nested(batch)
            return
        if self.finalized:
            self.extend(batch)
            if self.data is batch:
                self.data = batch.copy()
            return
        self.data, self._room = concatenate_with_spare_row([_stack(self.data), batch] if self.data else [batch])
        self.finalized = True

    def _extend_finalized_nested(self, batch: dict) -> None:
        if self.finalized and self._total() == 0:
            self.data = map_structure(np.array, batch)
        elif self.finalized:
            self.data = _concat([self.data, batch])
        else:
            self.data = _concat([_stack(self.data), batch]) if self.data else map_structure(np.array, batch)
        self.finalized = True

    def pop(self, index: int = -1):
        """Remove and return one item (index semantics as in `get`)."""
        total = self._total()
        pos = self.lookback + index if index >= 0 else total + index
        if not 0 <= pos < total:
            raise IndexError(f"pop index {index} out of range (len={len(self)}, lookback={self.lookback}).")
        if self.finalized:
            item = map_structure(lambda a: a[pos].copy(), self.data)
            self.data = map_structure(lambda a: np.delete(a, pos, axis=0), self.data)
        else:
            item = self.data.pop(pos)
        if pos < self.lookback:
            self.lookback -= 1
        return item

    def finalize(self) -> None:
        """Convert the list of items into a numpy batch (per leaf for dict/tuple items)."""
        if self.finalized:
            return
        with_room = stack_with_spare_row(self.data)
        if with_room is not None:
            self.data, self._room = with_room
        else:
            self.data = _stack(self.data) if self.data else _empty_for_space(self._space)
        self.finalized = True

    # ---- reading -----------------------------------------------------------------

    def get(self, indices: Indices = None, *, neg_index_as_lookback: bool = False,
            fill: Any = None, one_hot_discrete: bool = False, _ignore_last_ts: bool = False):
        """Return item(s) at `indices` (None = all ts>=0 items).

        An int returns one item; a list or slice returns a list (a numpy batch
        once finalized; slices of a finalized buffer are views where no fill is
        needed). `one_hot_discrete` turns Discrete/MultiDiscrete items of
        `space` into float32 one-hot vectors. `_ignore_last_ts` treats the last
        item as absent. See the module docstring for index and fill semantics.
        """
        total = self._total() - (1 if _ignore_last_ts else 0)
        one_hot = one_hot_discrete and self._space is not None
        if isinstance(indices, (int, np.integer)):
            return self._get_int(int(indices), neg_index_as_lookback, fill, one_hot, total)
        if indices is None:
            return self._get_range(range(self.lookback, total), None, one_hot, total)
        if isinstance(indices, slice):
            r = self._slice_positions(indices, neg_index_as_lookback, total)
            return self._get_range(r, fill, one_hot, total)
        if isinstance(indices, (list, tuple, np.ndarray)):
            return self._get_list(list(np.asarray(indices, dtype=np.int64).reshape(-1).tolist()),
                                  neg_index_as_lookback, fill, one_hot, total)
        raise TypeError(f"Unsupported indices type {type(indices).__name__}: use None, int, list or slice.")

    def _abs(self, idx: int, neg_index_as_lookback: bool, total: int) -> int:
        """ts-relative index -> position in `self.data` (may lie out of range)."""
        return self.lookback + idx if (idx >= 0 or neg_index_as_lookback) else total + idx

    def _slice_positions(self, slice_: slice, neg_index_as_lookback: bool, total: int) -> range:
        step = 1 if slice_.step is None else int(slice_.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        start, stop = slice_.start, slice_.stop
        if start is None:
            start = self.lookback if step > 0 else total - 1
        else:
            start = self._abs(int(start), neg_index_as_lookback, total)
        if stop is None:
            # A missing stop never reaches into the lookback buffer.
            stop = total if step > 0 else self.lookback - 1
        else:
            stop = self._abs(int(stop), neg_index_as_lookback, total)
        return range(start, stop, step)

    def _item_at(self, pos: int, one_hot: bool):
        item = map_structure(lambda a: a[pos], self.data) if self.finalized else self.data[pos]
        return _one_hot(item, self._space) if one_hot else item

    def _fill_item(self, fill, one_hot: bool):
        # Shape the fill like the newest stored array item: connectors may have rewritten the data
        # into a shape other than the space's (e.g. flattened or normalised observations).
        newest = None
        if self._total() > 0:
            newest = map_structure(lambda a: a[-1], self.data) if self.finalized else self.data[-1]
        if not isinstance(first_leaf(newest), np.ndarray) or one_hot:
            # Non-array items (floats, infos dicts) keep the space-based (or plain) fill.
            return _fill_for_space(self._space, fill, one_hot) if self._space is not None else \
                _fill_like(newest, fill)
        return map_structure(lambda a: _fill_like(a, fill), newest)

    def _get_int(self, idx, neg_index_as_lookback, fill, one_hot, total):
        pos = self._abs(idx, neg_index_as_lookback, total)
        if 0 <= pos < total:
            return self._item_at(pos, one_hot)
        if fill is None:
            raise IndexError(
                f"Index {idx} (neg_index_as_lookback={neg_index_as_lookback}) is out of range: "
                f"buffer has {total - self.lookback} items after {self.lookback} lookback items. "
                "Pass `fill=...` to pad missing positions instead.")
        return self._fill_item(fill, one_hot)

    def _get_range(self, r: range, fill, one_hot, total):
        n_before, core, n_after = _split(r, total)
        sl = _to_slice(core)
        if self.finalized:
            part = map_structure(lambda a: a[sl], self.data)
            if one_hot:
                part = _one_hot(part, self._space)
        else:
            part = self.data[sl]
            if one_hot:
                part = [_one_hot(x, self._space) for x in part]
        if fill is None or (n_before == 0 and n_after == 0):
            return part
        fill_item = self._fill_item(fill, one_hot)
        if not self.finalized:
            return [fill_item] * n_before + part + [fill_item] * n_after
        pieces = []
        if n_before:
            pieces.append(_stack([fill_item] * n_before))
        if len(core):
            pieces.append(part)
        if n_after:
            pieces.append(_stack([fill_item] * n_after))
        return pieces[0] if len(pieces) == 1 else _concat(pieces)

    def _get_list(self, idxs: List[int], neg_index_as_lookback, fill, one_hot, total):
        positions = [self._abs(i, neg_index_as_lookback, total) for i in idxs]
        if all(0 <= p < total for p in positions):
            if self.finalized:
                part = map_structure(lambda a: a[positions], self.data)
                return _one_hot(part, self._space) if one_hot else part
            return [self._item_at(p, one_hot) for p in positions]
        items = [self._get_int(i, neg_index_as_lookback, fill, one_hot, total) for i in idxs]
        return _stack(items) if self.finalized else items

    def _items(self) -> list:
        """All ts>=0 items as a list (unbatched if finalized)."""
        part = self.get()
        return unbatch_items(part) if self.finalized else list(part)

    # ---- writing -------------------------------------------------------------------

    def set(self, new_data, *, at_indices: Indices = None, neg_index_as_lookback: bool = False) -> None:
        """Overwrite item(s) at `at_indices` (same semantics as `get`, no fill).

        `at_indices=None` replaces all ts>=0 items; list/slice targets take a
        list of items (or a batch) of exactly matching length. Out-of-range
        ints raise IndexError; out-of-range slice parts are clipped. After
        `finalize()` this writes into the arrays (values cast to their dtype).
        """
        total = self._total()
        if isinstance(at_indices, (int, np.integer)):
            pos = self._abs(int(at_indices), neg_index_as_lookback, total)
            if not 0 <= pos < total:
                raise IndexError(f"Cannot set index {at_indices} (neg_index_as_lookback="
                                 f"{neg_index_as_lookback}): out of range (len={len(self)}, "
                                 f"lookback={self.lookback}).")
            if self.finalized:
                map_structure(lambda a, v: a.__setitem__(pos, v), self.data, new_data)
            else:
                self.data[pos] = new_data
            return
        if at_indices is None:
            positions = range(self.lookback, total)
        elif isinstance(at_indices, slice):
            _, positions, _ = _split(self._slice_positions(at_indices, neg_index_as_lookback, total), total)
        elif isinstance(at_indices, (list, tuple, np.ndarray)):
            idxs = np.asarray(at_indices, dtype=np.int64).reshape(-1).tolist()
            positions = [self._abs(i, neg_index_as_lookback, total) for i in idxs]
            bad = [i for i, p in zip(idxs, positions) if not 0 <= p < total]
            if bad:
                raise IndexError(f"Cannot set indices {bad}: out of range (len={len(self)}, lookback={self.lookback}).")
        else:
            raise TypeError(f"Unsupported at_indices type {type(at_indices).__name__}.")
        if _batch_len(new_data) != len(positions):
            raise ValueError(f"`new_data` has {_batch_len(new_data)} items but {len(positions)} "
                             f"positions are addressed by at_indices={at_indices!r}.")
        if not positions:
            return
        target = _to_slice(positions) if isinstance(positions, range) else positions
        if self.finalized:
            batch = _stack(list(new_data)) if isinstance(new_data, (list, tuple)) else new_data
            map_structure(lambda a, v: a.__setitem__(target, v), self.data, batch)
        elif isinstance(target, slice):
            self.data[target] = _as_items(new_data)
        else:
            for p, item in zip(target, _as_items(new_data)):
                self.data[p] = item

    # ---- state -----------------------------------------------------------------------

    def get_state(self) -> dict:
        """Plain dict snapshot (list copied / arrays copied, space kept as object)."""
        return {
            "data": list(self.data) if isinstance(self.data, list) else map_structure(np.copy, self.data),
            "lookback": self.lookback,
            "finalized": self.finalized,
            "space": self._space,
        }

    @staticmethod
    def from_state(state: dict) -> "InfiniteLookbackBuffer":
        buf = InfiniteLookbackBuffer(data=state["data"], lookback=state["lookback"], space=state.get("space"))
        buf.finalized = state.get("finalized", buf.finalized)
        return buf
