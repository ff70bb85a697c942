"""Descriptions of objects as JSON: classes and functions by "module:qualname", gymnasium spaces and
dataclasses by their fields. Nothing is pickled; loading looks names up through a `Trust` (trust.py),
which imports nothing a checkpoint names unless the caller trusts it.
"""
import dataclasses
import importlib
from typing import Any, Optional

import numpy as np

from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.state_checks import Where
from relayrl.checkpoints.trust import Trust
from relayrl.core.spaces import is_space

IMPORT, SPACE, DATACLASS, UNSTORABLE, TUPLE, ITEMS = (
    "__import__", "__space__", "__dataclass__", "__unstorable__", "__tuple__", "__items__")


class Unstorable:
    """Stands in for a value that could not be stored (a lambda, a closure, an arbitrary object)."""

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<not stored: {self.description}>"


def _import_for_saving(name: str):
    """The object `module:qualname` names (saving checks that a name leads back to its object)."""
    module_name, sep, qualname = str(name).partition(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def name_of(obj) -> Optional[str]:
    """'module:qualname' if importing that name gives back `obj` itself (or `obj` is a script's top-level
    definition run elsewhere), else None (lambdas, closures)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    try:
        return f"{module}:{qualname}" if _import_for_saving(f"{module}:{qualname}") is obj else None
    except (ImportError, AttributeError):
        # A script's own class or function that reached another process by value (a Tune trial, a Ray actor:
        # cloudpickle ships `__main__`'s definitions whole) is not in that process's `__main__`; it is still the
        # script's `__main__:Name`, which a restore resolves only when the caller passes it in `trusted`.
        return f"{module}:{qualname}" if module == "__main__" else None


def describe(value: Any) -> Any:
    """JSON-able description of `value`; what cannot be described becomes an UNSTORABLE marker."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        items = [describe(v) for v in value]
        return {TUPLE: items} if isinstance(value, tuple) else items
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: describe(v) for k, v in value.items()}
        return {ITEMS: [[describe(k), describe(v)] for k, v in value.items()]}
    if is_space(value):
        return _describe_space(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = name_of(type(value))
        if name is not None:
            return {DATACLASS: name, "fields": {f.name: describe(getattr(value, f.name))
                                                for f in dataclasses.fields(value)}}
    if isinstance(value, type) or callable(value):
        name = name_of(value)
        if name is not None:
            return {IMPORT: name}
        what = getattr(value, "__qualname__", None) or type(value).__qualname__
        return {UNSTORABLE: f"{what} (a lambda, closure or local definition cannot be imported by name)"}
    return {UNSTORABLE: f"an object of type {type(value).__module__}.{type(value).__qualname__}"}


def rebuild(data: Any, trust: Trust, where: Where) -> Any:
    """Inverse of `describe`; names resolve through `trust`, unstorable values come back as `Unstorable`
    placeholders. `where` names the place in the checkpoint, for error messages."""
    if isinstance(data, list):
        return [rebuild(v, trust, where / i) for i, v in enumerate(data)]
    if not isinstance(data, dict):
        return data
    if IMPORT in data:
        return trust.resolve(data[IMPORT], what=str(where))
    if UNSTORABLE in data:
        return Unstorable(str(data[UNSTORABLE]))
    if TUPLE in data:
        return tuple(rebuild(v, trust, where / i) for i, v in enumerate(_list(data[TUPLE], where)))
    if ITEMS in data:
        return {_hashable(rebuild(k, trust, where)): rebuild(v, trust, where / k) for k, v in _list(data[ITEMS], where)}
    if SPACE in data:
        return _rebuild_space(data, trust, where)
    if DATACLASS in data:
        cls = trust.resolve(data[DATACLASS], what=str(where))
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise where.error(f"{data[DATACLASS]!r} is not a dataclass; the checkpoint is corrupt.")
        fields = data.get("fields")
        if not isinstance(fields, dict):
            raise where.error(f"the dataclass {data[DATACLASS]!r} has no `fields`; the checkpoint is corrupt.")
        try:
            return cls(**{k: rebuild(v, trust, where / k) for k, v in fields.items()})
        except TypeError as error:
            raise where.error(f"cannot rebuild {data[DATACLASS]!r} ({error}).") from None
    return {k: rebuild(v, trust, where / k) for k, v in data.items()}


def _list(value: Any, where: Where) -> list:
    if not isinstance(value, list):
        raise where.error(f"expected a list in the checkpoint, found {type(value).__name__}.")
    return value


def find_unstorable(value: Any, where: str = ""):
    """(path, Unstorable) pairs inside a rebuilt value."""
    if isinstance(value, Unstorable):
        return [(where, value)]
    if isinstance(value, dict):
        return [hit for k, v in value.items() for hit in find_unstorable(v, f"{where}.{k}" if where else str(k))]
    if isinstance(value, (list, tuple)):
        return [hit for i, v in enumerate(value) for hit in find_unstorable(v, f"{where}[{i}]")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [hit for f in dataclasses.fields(value)
                for hit in find_unstorable(getattr(value, f.name), f"{where}.{f.name}")]
    return []


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, (list, tuple)) else key


# -- gymnasium spaces ----------------------------------------------------------------------------
def _describe_space(space) -> dict:
    from gymnasium import spaces

    kind = type(space).__name__
    if isinstance(space, spaces.Box):
        return {SPACE: "Box", "low": space.low.tolist(), "high": space.high.tolist(), "shape": list(space.shape),
                "dtype": space.dtype.str}
    if isinstance(space, spaces.Discrete):
        return {SPACE: "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {SPACE: "MultiDiscrete", "nvec": space.nvec.tolist(), "start": space.start.tolist(),
                "dtype": space.dtype.str}
    if isinstance(space, spaces.MultiBinary):
        return {SPACE: "MultiBinary", "n": space.n if isinstance(space.n, int) else list(space.n)}
    if isinstance(space, spaces.Tuple):
        return {SPACE: "Tuple", "spaces": [_describe_space(s) for s in space.spaces]}
    if isinstance(space, spaces.Dict):
        return {SPACE: "Dict", "spaces": [[k, _describe_space(s)] for k, s in space.spaces.items()]}
    return {UNSTORABLE: f"a gymnasium {kind} space (only Box, Discrete, MultiDiscrete, MultiBinary, Tuple "
                        "and Dict are stored)"}


def _rebuild_space(data: dict, trust: Trust, where: Where):
    try:
        return _space_from_fields(data, trust, where)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise where.error(f"a malformed {data.get(SPACE)!r} space in the checkpoint "
                          f"({type(error).__name__}: {error}).") from None


def _space_from_fields(data: dict, trust: Trust, where: Where):
    from gymnasium import spaces

    kind = data[SPACE]
    if kind == "Box":
        dtype = np.dtype(data["dtype"])
        return spaces.Box(low=np.asarray(data["low"], dtype), high=np.asarray(data["high"], dtype),
                          shape=tuple(data["shape"]), dtype=dtype)
    if kind == "Discrete":
        return spaces.Discrete(data["n"], start=data["start"])
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(data["nvec"], dtype=np.dtype(data["dtype"]), start=data["start"])
    if kind == "MultiBinary":
        return spaces.MultiBinary(data["n"])
    if kind == "Tuple":
        return spaces.Tuple([rebuild(s, trust, where) for s in data["spaces"]])
    if kind == "Dict":
        return spaces.Dict({k: rebuild(s, trust, where) for k, s in data["spaces"]})
    raise where.error(f"unknown space kind {kind!r} in the checkpoint.")
