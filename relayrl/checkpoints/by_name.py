"""Descriptions of objects as JSON: classes and functions by "module:qualname", gymnasium spaces and
dataclasses by their fields. Nothing is pickled; loading only imports installed modules by name.
"""
import dataclasses
import importlib
from typing import Any, Optional

import numpy as np

from relayrl.checkpoints.errors import CheckpointError
from relayrl.core.spaces import is_space

IMPORT, SPACE, DATACLASS, UNSTORABLE, TUPLE, ITEMS = (
    "__import__", "__space__", "__dataclass__", "__unstorable__", "__tuple__", "__items__")


class Unstorable:
    """Stands in for a value that could not be stored (a lambda, a closure, an arbitrary object)."""

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<not stored: {self.description}>"


def import_by_name(name: str):
    """The object `module:qualname` names, imported from an installed module (nothing else is executed)."""
    module_name, sep, qualname = str(name).partition(":")
    if not sep or not module_name or not qualname:
        raise CheckpointError(f"{name!r} is not a 'module:qualname' reference.")
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as error:
        hint = (" `__main__` is the script that saved the checkpoint; move the definition into an importable "
                "module." if module_name == "__main__" else "")
        raise CheckpointError(f"Cannot import {name!r} ({error}).{hint}") from None
    return obj


def name_of(obj) -> Optional[str]:
    """'module:qualname' if importing that name gives back `obj` itself, else None (lambdas, closures)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    try:
        return f"{module}:{qualname}" if import_by_name(f"{module}:{qualname}") is obj else None
    except CheckpointError:
        return None


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


def rebuild(data: Any) -> Any:
    """Inverse of `describe`; unstorable values come back as `Unstorable` placeholders."""
    if isinstance(data, list):
        return [rebuild(v) for v in data]
    if not isinstance(data, dict):
        return data
    if IMPORT in data:
        return import_by_name(data[IMPORT])
    if UNSTORABLE in data:
        return Unstorable(data[UNSTORABLE])
    if TUPLE in data:
        return tuple(rebuild(v) for v in data[TUPLE])
    if ITEMS in data:
        return {_hashable(rebuild(k)): rebuild(v) for k, v in data[ITEMS]}
    if SPACE in data:
        return _rebuild_space(data)
    if DATACLASS in data:
        cls = import_by_name(data[DATACLASS])
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise CheckpointError(f"{data[DATACLASS]!r} is not a dataclass; the checkpoint is corrupt.")
        return cls(**{k: rebuild(v) for k, v in data["fields"].items()})
    return {k: rebuild(v) for k, v in data.items()}


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


def _rebuild_space(data: dict):
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
        return spaces.Tuple([rebuild(s) for s in data["spaces"]])
    if kind == "Dict":
        return spaces.Dict({k: rebuild(s) for k, s in data["spaces"]})
    raise CheckpointError(f"Unknown space kind {kind!r} in the checkpoint.")
