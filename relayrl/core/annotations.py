"""RLlib's API annotations (`ray.rllib.utils.annotations`), so ported code keeps its decorators.

`override(ParentClass)` checks that the method exists on the parent; the stability markers return what
they decorate unchanged.
"""
from typing import Any, Callable


def override(parent_cls: type) -> Callable:
    """Marks a method as overriding `parent_cls`'s method of the same name (TypeError if it has none)."""

    def check(method: Callable) -> Callable:
        if not hasattr(parent_cls, method.__name__):
            raise TypeError(f"{method.__name__} does not override any method of {parent_cls.__name__}")
        return method

    return check


def _marker(obj: Any = None, **kwargs) -> Any:
    """PublicAPI / DeveloperAPI(...) / OldAPIStack: usable bare or with arguments (stability=...)."""
    if obj is None:
        return lambda inner: inner
    return obj


PublicAPI = DeveloperAPI = ExperimentalAPI = OldAPIStack = _marker
OverrideToImplementCustomLogic = OverrideToImplementCustomLogic_CallToSuperRecommended = _marker

__all__ = ["override", "PublicAPI", "DeveloperAPI", "ExperimentalAPI", "OldAPIStack",
           "OverrideToImplementCustomLogic", "OverrideToImplementCustomLogic_CallToSuperRecommended"]
