"""The last evaluation's results in a checkpoint, so a resumed run carries them as the uninterrupted one does.

Iterations that do not evaluate report the last evaluation's results (as RLlib 2.60, whose metrics logger holds
them and is checkpointed). A checkpoint holds data, never objects: only the results' plain data is stored
(numbers, strings, booleans, None, and lists and dicts of them; numpy scalars as Python numbers). Anything else a
custom evaluation function returned (arrays such as videos, objects) is left out.
"""
from typing import Any, Mapping, Optional

import numpy as np

from relayrl.checkpoints.state_checks import Where, require

_PLAIN = (str, int, float, bool, type(None))
_LEFT_OUT = object()


def plain_results(results: Optional[Mapping[str, Any]]) -> Optional[dict]:
    """A copy of `results` holding only its plain data (see the module docstring); None stays None."""
    return None if results is None else _plain(results)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            kept = _plain(item)
            if isinstance(key, str) and kept is not _LEFT_OUT:
                out[key] = kept
        return out
    if isinstance(value, (list, tuple)):
        items = [_plain(item) for item in value]
        return _LEFT_OUT if any(item is _LEFT_OUT for item in items) else items
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    return value if isinstance(value, _PLAIN) else _LEFT_OUT


def check_plain_results(value: Any, where: Where) -> None:
    """A stored `last_evaluation_results`: None, or a dict of plain data."""
    if value is None:
        return
    require(isinstance(value, Mapping), where, f"expected a dict of results or None, found {type(value).__name__}.")
    _check_plain(value, where)


def _check_plain(value: Any, where: Where) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            require(isinstance(key, str), where, f"expected text keys, found {key!r}.")
            _check_plain(item, where / key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_plain(item, where / i)
    else:
        require(isinstance(value, _PLAIN), where, f"expected a number, text, a list or a dict, found "
                                                  f"{type(value).__name__}.")
