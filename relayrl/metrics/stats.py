"""One reduced quantity of a :class:`~relayrl.metrics.metrics_logger.MetricsLogger`.

``Stats(reduce, window, ema_coeff, clear_on_reduce)`` returns the subclass that fits the
settings, so ``push`` (called per logged value, often per episode) is a plain list/deque
operation with no mode branching and no numpy.

Every Stats can export ``pending()``: a short list of values which, pushed one by one
into another Stats with the same settings, has exactly the effect that the values pushed
here since the last ``reduce()`` had. The logger's ``reduce_for_merge`` ships these so a
parent can merge several children exactly (e.g. one windowed mean over all runners'
episodes instead of a mean of per-runner means).
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

REDUCE_METHODS = ("mean", "min", "max", "sum", None)
DEFAULT_EMA_COEFF = 0.01
# EMA stats keep at most this many pending values; older ones weigh < 1e-12 in the EMA.
_EMA_PENDING_MAX = 100_000

_NAN = float("nan")


def check_settings(reduce: Any, window: Any, ema_coeff: Any) -> None:
    """Raises ValueError for settings RLlib's MetricsLogger also rejects."""
    if reduce not in REDUCE_METHODS:
        raise ValueError(
            f"reduce={reduce!r} is not supported; allowed values are "
            f"{', '.join(repr(r) for r in REDUCE_METHODS)}."
        )
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 1
    ):
        raise ValueError(f"window={window!r} must be None or an int >= 1.")
    if ema_coeff is not None:
        if window is not None:
            raise ValueError(
                f"ema_coeff={ema_coeff!r} and window={window!r} are mutually "
                "exclusive: an EMA covers all values, a window the last N only."
            )
        if reduce != "mean":
            raise ValueError(
                f"ema_coeff={ema_coeff!r} needs reduce='mean' (got reduce={reduce!r})."
            )
        if not 0.0 < ema_coeff <= 1.0:
            raise ValueError(f"ema_coeff={ema_coeff!r} must be in (0, 1].")


def to_number(value: Any) -> int | float:
    """Converts numpy / torch scalars (anything with ``.item()``) to a Python number."""
    item = getattr(value, "item", None)
    if item is not None:
        value = item()
    if isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"Cannot log {value!r} ({type(value).__name__}) with a numeric reduce; "
            "use reduce=None to collect arbitrary objects."
        ) from None


def _to_item(value: Any) -> Any:
    # reduce=None keeps objects as they are; only 0-d arrays / tensors become numbers.
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return value.item()
    return value


def _combine(reduce: str, values: list) -> Any:
    if not values:
        return 0 if reduce == "sum" else _NAN
    if reduce == "mean":
        return sum(values) / len(values)
    if reduce == "sum":
        return sum(values)
    return min(values) if reduce == "min" else max(values)


class Stats:
    """A reduced quantity; ``Stats(...)`` builds the implementation fitting the settings.

    Settings: ``reduce`` in {"mean", "min", "max", "sum", None}; ``window`` (last N
    values); ``ema_coeff`` (only "mean", no window; "mean" without window defaults to
    EMA 0.01); ``clear_on_reduce`` (None -> True only for reduce=None without window).
    """

    __slots__ = ("reduce_method", "window", "ema_coeff", "clear_on_reduce")

    def __new__(cls, reduce="mean", window=None, ema_coeff=None, clear_on_reduce=None):
        if cls is Stats:
            check_settings(reduce, window, ema_coeff)
            if window is not None:
                cls = _WindowStats
            elif reduce == "mean":
                cls = _EmaStats
            elif reduce == "sum":
                cls = _SumStats
            elif reduce is None:
                cls = _ListStats
            else:
                cls = _MinMaxStats
        return object.__new__(cls)

    def __init__(self, reduce="mean", window=None, ema_coeff=None, clear_on_reduce=None):
        if reduce == "mean" and window is None and ema_coeff is None:
            ema_coeff = DEFAULT_EMA_COEFF
        if clear_on_reduce is None:
            # An unwindowed list that is never cleared would grow forever.
            clear_on_reduce = reduce is None and window is None
        self.reduce_method = reduce
        self.window = window
        self.ema_coeff = ema_coeff
        self.clear_on_reduce = bool(clear_on_reduce)
        self._clear()
        self._mark_reduced()

    # --- implemented per mode ---------------------------------------------------------
    def push(self, value: Any) -> None:
        raise NotImplementedError

    def peek(self) -> Any:
        """The reduced value, without changing any state."""
        raise NotImplementedError

    def pending(self) -> list:
        """Values equivalent (for merging) to everything pushed since the last reduce."""
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError

    def _mark_reduced(self) -> None:
        raise NotImplementedError

    def _state(self) -> dict:
        raise NotImplementedError

    def _load(self, state: dict) -> None:
        raise NotImplementedError

    # --- shared ----------------------------------------------------------------------
    def convert(self, value: Any) -> Any:
        """Turns a logged value into what ``push`` expects (slow path for non-int/float)."""
        return to_number(value)

    def reduce(self) -> Any:
        """Returns ``peek()``, then clears (if ``clear_on_reduce``) and starts a new period."""
        out = self.peek()
        if self.clear_on_reduce:
            self._clear()
        self._mark_reduced()
        return out

    def set(self, values: list) -> None:
        """Overwrites: as if cleared and then ``values`` pushed (usually just one)."""
        self._clear()
        self._mark_reduced()
        for v in values:
            self.push(v)

    def settings(self) -> dict:
        return {
            "reduce": self.reduce_method,
            "window": self.window,
            "ema_coeff": self.ema_coeff,
            "clear_on_reduce": self.clear_on_reduce,
        }

    def get_state(self) -> dict:
        """Plain dict (str keys, numbers, lists, None): JSON-serialisable for numeric stats."""
        return {**self.settings(), **self._state()}

    @classmethod
    def from_state(cls, state: dict) -> "Stats":
        stats = Stats(
            state["reduce"], state["window"], state["ema_coeff"], state["clear_on_reduce"]
        )
        stats._load(state)
        return stats

    # Pickle / deepcopy through the same plain state (instances are built by __new__).
    def __reduce__(self):
        return (Stats.from_state, (self.get_state(),))

    def __repr__(self) -> str:
        s = ", ".join(f"{k}={v!r}" for k, v in self.settings().items())
        return f"Stats({s}, value={self.peek()!r})"


class _EmaStats(Stats):
    """reduce="mean" without window: ``new = (1 - c) * old + c * value``."""

    __slots__ = ("_ema", "_keep", "_pending")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._keep = 1.0 - self.ema_coeff

    def push(self, value):
        ema = self._ema
        self._ema = value if ema is None else self._keep * ema + self.ema_coeff * value
        self._pending.append(value)

    def peek(self):
        return _NAN if self._ema is None else float(self._ema)

    def pending(self):
        # Replaying the raw values reproduces this EMA's update exactly.
        return list(self._pending)

    def _clear(self):
        self._ema = None

    def _mark_reduced(self):
        c = self.ema_coeff
        # Weight of a value k steps back is (1-c)^k; keep those above 1e-12.
        n = _EMA_PENDING_MAX if c < 1e-6 else math.ceil(math.log(1e-12) / math.log1p(-c))
        self._pending = deque(maxlen=max(1, min(n, _EMA_PENDING_MAX)))

    def _state(self):
        return {"values": [] if self._ema is None else [self._ema], "pending": list(self._pending)}

    def _load(self, state):
        self._ema = state["values"][0] if state["values"] else None
        self._pending.extend(state["pending"])


class _WindowStats(Stats):
    """Any reduce over the last ``window`` values (a deque drops older ones on append)."""

    __slots__ = ("_values", "_n_new")

    def push(self, value):
        self._values.append(value)
        self._n_new += 1

    def peek(self):
        if self.reduce_method is None:
            return list(self._values)
        return _combine(self.reduce_method, self._values)

    def pending(self):
        n = min(self._n_new, len(self._values))
        return list(self._values)[len(self._values) - n :] if n else []

    def convert(self, value):
        return _to_item(value) if self.reduce_method is None else to_number(value)

    def _clear(self):
        self._values = deque(maxlen=self.window)

    def _mark_reduced(self):
        self._n_new = 0

    def _state(self):
        return {"values": list(self._values), "n_new": self._n_new}

    def _load(self, state):
        self._values.extend(state["values"])
        self._n_new = state["n_new"]


class _SumStats(Stats):
    """reduce="sum" without window: a running total (lifetime unless clear_on_reduce)."""

    __slots__ = ("_total", "_delta", "_n_new")

    def push(self, value):
        self._total += value
        self._delta += value
        self._n_new += 1

    def peek(self):
        return self._total

    def pending(self):
        # Only the increase since the last reduce, so a parent never double counts.
        return [self._delta] if self._n_new else []

    def _clear(self):
        self._total = 0

    def _mark_reduced(self):
        self._delta = 0
        self._n_new = 0

    def _state(self):
        return {"values": [self._total], "pending": self.pending()}

    def _load(self, state):
        self._total = state["values"][0]
        self._delta = state["pending"][0] if state["pending"] else 0
        self._n_new = len(state["pending"])


class _MinMaxStats(Stats):
    """reduce="min"/"max" without window: the best value (lifetime unless clear_on_reduce)."""

    __slots__ = ("_best", "_n_new", "_is_min")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._is_min = self.reduce_method == "min"

    def push(self, value):
        best = self._best
        if best is None or (value < best if self._is_min else value > best):
            self._best = value
        self._n_new += 1

    def peek(self):
        return _NAN if self._best is None else self._best

    def pending(self):
        # The best value is idempotent under min/max, so it stands for all new values.
        return [self._best] if self._n_new and self._best is not None else []

    def _clear(self):
        self._best = None

    def _mark_reduced(self):
        self._n_new = 0

    def _state(self):
        return {"values": [] if self._best is None else [self._best], "n_new": self._n_new}

    def _load(self, state):
        self._best = state["values"][0] if state["values"] else None
        self._n_new = state["n_new"]


class _ListStats(Stats):
    """reduce=None without window: collects every value."""

    __slots__ = ("_values", "_since")

    def push(self, value):
        self._values.append(value)

    def peek(self):
        return list(self._values)

    def pending(self):
        return self._values[self._since :]

    def convert(self, value):
        return _to_item(value)

    def reduce(self):
        if self.clear_on_reduce:
            # Hand the list over instead of copying it.
            out, self._values = self._values, []
            self._since = 0
            return out
        return super().reduce()

    def _clear(self):
        self._values = []

    def _mark_reduced(self):
        self._since = len(self._values)

    def _state(self):
        return {"values": list(self._values), "n_new": len(self._values) - self._since}

    def _load(self, state):
        self._values = list(state["values"])
        self._since = len(self._values) - state["n_new"]
