"""Helpers about gymnasium spaces that do not import gymnasium."""
from typing import Any


def is_space(value: Any) -> bool:
    """Whether `value` is a gymnasium space; checked by module name, so gymnasium is never imported here."""
    return any(k.__module__.startswith("gymnasium.spaces") for k in type(value).__mro__)
