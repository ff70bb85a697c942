"""RLlib's `ray.rllib.env.utils`: optional imports of env libraries that ported scripts check for."""
import importlib
from types import ModuleType
from typing import Optional


def _try_import(module: str, error: bool) -> Optional[ModuleType]:
    try:
        return importlib.import_module(module)
    except ImportError:
        if error:
            raise ImportError(f"Could not import {module}: OpenSpiel is not a dependency of relayrl; install it "
                              "with `pip install open_spiel`.") from None
        return None


def try_import_pyspiel(error: bool = False) -> Optional[ModuleType]:
    """The `pyspiel` module (OpenSpiel's games), or None if it is not installed (`error=True`: ImportError)."""
    return _try_import("pyspiel", error)


def try_import_open_spiel(error: bool = False) -> Optional[ModuleType]:
    """The `open_spiel` package, or None if it is not installed (`error=True`: ImportError)."""
    return _try_import("open_spiel", error)


__all__ = ["try_import_open_spiel", "try_import_pyspiel"]
