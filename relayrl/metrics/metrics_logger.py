"""MetricsLogger: RLlib's (new API stack) metrics API, with a numpy-free hot path.

Every Algorithm, EnvRunner and Learner owns one. Values are logged under str keys or
tuples of str (``("a", "b")`` shows up as ``{"a": {"b": ...}}``); each key's settings
(reduce / window / ema_coeff / clear_on_reduce, see :class:`~relayrl.metrics.stats.Stats`)
are fixed by its first log call.

Merging children into a parent, two ways:

1. ``parent.merge_and_log_n_dicts([child.reduce() for child in children])``: plain
   reduced dicts. Per leaf, the children's values are combined with the parent key's
   reduce (or the ``reduce`` argument for a new key): mean of the values for "mean",
   min / max / sum, concatenation for None; NaN values (a child that saw no data) are
   skipped. The combined value is then logged once into the parent key, so the parent's
   own settings apply across iterations: a new "mean" key without window/ema_coeff is an
   EMA(0.01) of the per-iteration means. Not exact when children saw different numbers of
   values, and a lifetime sum (no clear_on_reduce) in the children is counted again on
   every merge.

2. ``parent.merge_and_log_n_dicts([child.reduce_for_merge() for child in children])``:
   exact. Each leaf carries the child's settings and the raw values logged since its
   last reduce (compressed where that is lossless: a sum ships its increase, a windowless
   min/max its best value). The parent creates missing keys with the child's settings
   and pushes all children's values, in children order, as if they had been logged
   here: a windowed mean then covers the last N values over all children, and a
   lifetime sum adds only what is new.

A child calls exactly one of ``reduce()`` / ``reduce_for_merge()`` per period: both
apply clear_on_reduce and start a new period (``peek()`` first to see its own values).
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Iterator, Sequence

from relayrl.metrics.stats import Stats, check_settings

__all__ = ["MetricsLogger", "STATS_MARKER"]

# Marks a leaf of ``reduce_for_merge()`` output (a dict, JSON-serialisable).
STATS_MARKER = "__relayrl_stats__"

_MISSING = object()


def _peek(stats: Stats) -> Any:
    return stats.peek()


def _reduce(stats: Stats) -> Any:
    return stats.reduce()


def _converted(stats: Stats, key: Any, value: Any) -> Any:
    """``stats.convert(value)`` (the slow path for values that are not a Python int or float),
    its error naming the metrics key."""
    try:
        return stats.convert(value)
    except TypeError as e:
        raise TypeError(f"Metrics key {key!r}: {e}") from None


def _as_path(key: Any) -> tuple:
    if isinstance(key, str):
        return (key,)
    if isinstance(key, tuple) and key and all(isinstance(k, str) for k in key):
        return key
    raise TypeError(f"A metrics key must be a str or a non-empty tuple of str, got {key!r}.")


def _is_record(obj: Any) -> bool:
    return isinstance(obj, dict) and STATS_MARKER in obj


def _iter_leaves(d: dict, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    for k, v in d.items():
        path = prefix + (k,)
        if isinstance(v, dict) and not _is_record(v):
            yield from _iter_leaves(v, path)
        else:
            yield path, v


def _nest(items: Iterable[tuple[tuple, Any]]) -> dict:
    out: dict = {}
    for path, value in items:
        d = out
        for part in path[:-1]:
            d = d.setdefault(part, {})
        d[path[-1]] = value
    return out


class _Timer:
    """Context manager behind ``log_time``; logs only when the block did not raise."""

    __slots__ = ("_logger", "_key", "_kwargs", "_start")

    def __init__(self, logger: "MetricsLogger", key, kwargs: dict):
        self._logger, self._key, self._kwargs = logger, key, kwargs

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._logger.log_value(self._key, time.perf_counter() - self._start, **self._kwargs)
        return False


class MetricsLogger:
    """Logs values under (nested) keys and reduces them per training iteration."""

    def __init__(self):
        self._stats: dict[tuple, Stats] = {}  # full path -> Stats, insertion ordered
        self._lookup: dict[Any, Stats] = {}  # raw key as passed (str or tuple) -> Stats
        self._prefixes: set[tuple] = set()  # every proper prefix of a stored path

    # --- logging ---------------------------------------------------------------------
    def log_value(
        self,
        key: str | tuple,
        value: Any,
        *,
        reduce: str | None = "mean",
        window: int | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool | None = None,
    ) -> None:
        """Logs one value. Settings are only read when ``key`` is new.

        ``clear_on_reduce=None`` means False, except True for reduce=None without window.
        Values with ``.item()`` (numpy / torch scalars) are converted to Python numbers.
        """
        stats = self._lookup.get(key)
        if stats is None:
            stats = self._get_or_create(key, reduce, window, ema_coeff, clear_on_reduce)
        cls = value.__class__
        if cls is not float and cls is not int:
            value = _converted(stats, key, value)
        stats.push(value)

    def log_values(
        self,
        key: str | tuple,
        values: Sequence[Any],
        *,
        reduce: str | None = "mean",
        window: int | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool | None = None,
    ) -> None:
        """``log_value`` for each of ``values``, in order, with one key lookup for all of them.
        No values log nothing (a new key is not created)."""
        if len(values) == 0:
            return
        stats = self._lookup.get(key)
        if stats is None:
            stats = self._get_or_create(key, reduce, window, ema_coeff, clear_on_reduce)
        push = stats.push
        for value in values:
            cls = value.__class__
            if cls is not float and cls is not int:
                value = _converted(stats, key, value)
            push(value)

    def log_dict(
        self,
        stats_dict: dict,
        *,
        key: str | tuple | None = None,
        reduce: str | None = "mean",
        window: int | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool | None = None,
    ) -> None:
        """Logs every leaf of a (nested) dict, under the prefix ``key`` if given."""
        prefix = () if key is None else _as_path(key)
        for path, value in _iter_leaves(stats_dict):
            self.log_value(
                prefix + path,
                value,
                reduce=reduce,
                window=window,
                ema_coeff=ema_coeff,
                clear_on_reduce=clear_on_reduce,
            )

    def log_time(
        self,
        key: str | tuple,
        *,
        reduce: str | None = "mean",
        window: int | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool | None = None,
    ) -> _Timer:
        """``with logger.log_time("timers/x"): ...`` logs the block's seconds (perf_counter)."""
        kwargs = dict(
            reduce=reduce, window=window, ema_coeff=ema_coeff, clear_on_reduce=clear_on_reduce
        )
        return _Timer(self, key, kwargs)

    def set_value(
        self,
        key: str | tuple,
        value: Any,
        *,
        reduce: str | None = "mean",
        window: int | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool | None = None,
    ) -> None:
        """Overwrites ``key``: as if cleared, then ``value`` logged once (a list for reduce=None
        replaces the whole list)."""
        stats = self._get_or_create(key, reduce, window, ema_coeff, clear_on_reduce)
        if stats.reduce_method is None and isinstance(value, list):
            stats.set([stats.convert(v) for v in value])  # a whole list replaces the list
        else:
            stats.set([stats.convert(value)])

    # --- reading / reducing ----------------------------------------------------------
    def peek(self, key: str | tuple | None = None, *, default: Any = _MISSING) -> Any:
        """Current reduced value of a leaf, or nested dict of a prefix; changes nothing.

        ``key=None`` peeks everything. A str containing "/" that is not itself a key is
        read as a path ("env_runners/episode_return_mean"). Missing key: ``default`` if
        given, else KeyError.
        """
        if key is None:
            return _nest((p, s.peek()) for p, s in self._stats.items())
        path = self._resolve(key)
        if path is None:
            if default is not _MISSING:
                return default
            raise KeyError(f"Metrics key {key!r} not found in MetricsLogger.")
        return self._apply(path, _peek)

    def reduce(self, key: str | tuple | None = None) -> Any:
        """Reduces all keys (or those under ``key``), applying clear_on_reduce.

        Returns a nested dict of plain Python numbers / lists (a leaf ``key`` returns just
        its value). Starts a new period for ``reduce_for_merge``.
        """
        return self._reduce(key, _reduce)

    def reduce_for_merge(self, key: str | tuple | None = None) -> Any:
        """Like ``reduce()``, but each leaf is a record for an exact parent merge.

        Leaf: ``{STATS_MARKER: True, "reduce", "window", "ema_coeff", "clear_on_reduce",
        "values": [raw values since the last reduce]}`` (JSON-serialisable for numeric
        stats). Feed a list of these to the parent's ``merge_and_log_n_dicts``.
        """

        def record(stats: Stats) -> dict:
            values = stats.pending()
            stats.reduce()
            return {STATS_MARKER: True, **stats.settings(), "values": values}

        return self._reduce(key, record)

    def aggregate(self, stats_dicts: list[dict], *, key: str | tuple | None = None) -> None:
        """RLlib 2.40+'s name for `merge_and_log_n_dicts` (merge N children's reduced dicts under `key`)."""
        self.merge_and_log_n_dicts(stats_dicts, key=key)

    def merge_and_log_n_dicts(
        self,
        stats_dicts: list[dict],
        *,
        key: str | tuple | None = None,
        reduce: str | None = "mean",
        window: int | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool | None = None,
    ) -> None:
        """Merges N children's ``reduce()`` or ``reduce_for_merge()`` dicts (module doc).

        Settings arguments only apply to keys new to this logger and coming as plain
        values (records carry their own); a new key whose values are lists gets reduce=None.
        """
        check_settings(reduce, window, ema_coeff)
        prefix = () if key is None else _as_path(key)
        leaves: dict[tuple, list] = {}
        for d in stats_dicts:
            for path, leaf in _iter_leaves(d):
                leaves.setdefault(prefix + path, []).append(leaf)

        for path, children in leaves.items():
            records = [c for c in children if _is_record(c)]
            plain = [c for c in children if not _is_record(c)]
            stats = self._stats.get(path)
            if stats is None:
                if records:
                    r = records[0]
                    settings = (r["reduce"], r["window"], r["ema_coeff"], r["clear_on_reduce"])
                elif all(isinstance(c, (list, tuple)) for c in plain):
                    settings = (None, window, None, clear_on_reduce)
                else:
                    settings = (reduce, window, ema_coeff, clear_on_reduce)
                stats = self._get_or_create(path, *settings)
            for r in records:
                for v in r["values"]:
                    stats.push(v)
            if plain:
                self._merge_plain(stats, plain)

    @staticmethod
    def _merge_plain(stats: Stats, children: list) -> None:
        if stats.reduce_method is None:
            # Concatenate in children order.
            for c in children:
                for v in c if isinstance(c, (list, tuple)) else (c,):
                    stats.push(stats.convert(v))
            return
        numbers = []
        for c in children:
            if isinstance(c, (list, tuple)):
                # Lists are raw values: push them one by one.
                for v in c:
                    stats.push(stats.convert(v))
            else:
                v = stats.convert(c)
                if v == v:  # skip NaN: that child had nothing to report
                    numbers.append(v)
        if numbers:
            method = stats.reduce_method
            if method == "mean":
                stats.push(sum(numbers) / len(numbers))
            elif method == "sum":
                stats.push(sum(numbers))
            else:
                stats.push(min(numbers) if method == "min" else max(numbers))

    # --- structure -------------------------------------------------------------------
    def __contains__(self, key: Any) -> bool:
        """True for a logged key or a prefix of one."""
        try:
            return self._resolve(key) is not None
        except TypeError:
            return False

    def delete(self, *key: str, key_error: bool = True) -> None:
        """``delete("a", "b")`` removes leaf ("a", "b") or everything under that prefix."""
        path = key[0] if len(key) == 1 and isinstance(key[0], tuple) else tuple(key)
        path = self._resolve(path)
        if path is None:
            if key_error:
                raise KeyError(f"Metrics key {key!r} not found in MetricsLogger.")
            return
        n = len(path)
        self._stats = {p: s for p, s in self._stats.items() if p[:n] != path}
        self._rebuild_index()

    def reset(self) -> None:
        """Removes all keys and values."""
        self._stats = {}
        self._rebuild_index()

    def get_state(self) -> dict:
        """All keys, settings and raw values as plain lists/numbers (json.dumps-able)."""
        return {"stats": [{"key": list(p), **s.get_state()} for p, s in self._stats.items()]}

    def check_state(self, state: dict, where) -> None:
        """Raise a CheckpointError naming `where` if set_state(state) would fail (tried on a new logger)."""
        from relayrl.checkpoints.state_checks import check_by_trial

        check_by_trial(MetricsLogger, state, where)

    def set_state(self, state: dict) -> None:
        """Replaces everything with a ``get_state()`` result."""
        self._stats = {}
        for entry in state["stats"]:
            path = tuple(entry["key"])
            self._stats[path] = Stats.from_state(entry)
        self._rebuild_index()

    # --- internals -------------------------------------------------------------------
    def _get_or_create(self, key, reduce, window, ema_coeff, clear_on_reduce) -> Stats:
        path = _as_path(key)
        stats = self._stats.get(path)
        if stats is None:
            if path in self._prefixes or any(path[:i] in self._stats for i in range(1, len(path))):
                raise ValueError(
                    f"Metrics key {key!r} would be both a value and a group of values."
                )
            stats = Stats(reduce, window, ema_coeff, clear_on_reduce)
            self._stats[path] = stats
            self._prefixes.update(path[:i] for i in range(1, len(path)))
        self._lookup[key] = stats
        return stats

    def _rebuild_index(self) -> None:
        self._lookup = {}
        self._prefixes = {p[:i] for p in self._stats for i in range(1, len(p))}

    def _resolve(self, key) -> tuple | None:
        """Stored path (leaf or prefix) for ``key``, or None."""
        path = _as_path(key)
        if path in self._stats or path in self._prefixes:
            return path
        if isinstance(key, str) and "/" in key:
            path = tuple(key.split("/"))
            if all(path) and (path in self._stats or path in self._prefixes):
                return path
        return None

    def _apply(self, path: tuple, fn) -> Any:
        stats = self._stats.get(path)
        if stats is not None:
            return fn(stats)
        n = len(path)
        return _nest((p[n:], fn(s)) for p, s in list(self._stats.items()) if p[:n] == path)

    def _reduce(self, key, fn) -> Any:
        if key is None:
            return _nest((p, fn(s)) for p, s in list(self._stats.items()))
        path = self._resolve(key)
        if path is None:
            raise KeyError(f"Metrics key {key!r} not found in MetricsLogger.")
        return self._apply(path, fn)
