"""Importing an object a config names by path ("pkg.module:Class" or "pkg.module.Class").

Functions that turn such strings into objects take the import function as an argument, so that a
config loaded from a checkpoint resolves them through its Trust instead (checkpoints/trust.py).
"""
import importlib
from typing import Any, Callable

from relayrl.core.suggest import did_you_mean

ImportObject = Callable[..., Any]  # (path "module:qualname", *, what) -> object


def module_and_name(path: str) -> str:
    """"pkg.module:Qual.name" for "pkg.module:Qual.name" or "pkg.module.Name"."""
    if ":" in path:
        return path
    module_name, _, name = path.rpartition(".")
    return f"{module_name}:{name}"


def import_object(path: str, *, what: str) -> Any:
    """The object `path` ("pkg.module:Qual.name") names, importing its module; ValueError naming `what`."""
    module_name, _, qualname = module_and_name(path).partition(":")
    try:
        obj = importlib.import_module(module_name)
    except (ImportError, ValueError) as error:
        raise ValueError(f"{what}: cannot import module {module_name!r} ({error}).") from None
    for part in qualname.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            raise ValueError(f"{what}: {module_name!r} has no {qualname!r}.{did_you_mean(part, names)}")
        obj = getattr(obj, part)
    return obj
