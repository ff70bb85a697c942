"""relayrl's list of the classes a checkpoint may name (relayrl/checkpoints/nameable.py) is exact and complete:
each entry is a class of a nameable kind defined where the list says, nothing under relayrl.testing or
relayrl.__main__ is on it, and every relayrl class of a nameable kind is either on it or left out with a reason."""
import importlib
import pkgutil

import pytest

import relayrl
from relayrl.checkpoints.nameable import NAMEABLE, NOT_NAMEABLE
from relayrl.checkpoints.trust import checkpoint_kind


def test_nothing_in_relayrl_testing_or_the_command_line_is_listed():
    listed = [f"{module}:{name}" for module, names in NAMEABLE.items() for name in names]
    assert not [name for name in listed if name.startswith(("relayrl.testing", "relayrl.__main__"))]
    assert not set(listed) & set(NOT_NAMEABLE)


@pytest.mark.slow  # imports PPOTFPolicy's module (TensorFlow)
def test_every_listed_class_is_defined_there_and_has_a_kind():
    for module_name, names in NAMEABLE.items():
        module = importlib.import_module(module_name)
        for name in names:
            cls = getattr(module, name)
            assert isinstance(cls, type) and (cls.__module__, cls.__qualname__) == (module_name, name), (module_name,
                                                                                                        name)
            assert checkpoint_kind(cls) is not None, f"{module_name}:{name} is of no kind a config names"


@pytest.mark.slow  # imports every relayrl module (TensorFlow and Ray included)
def test_every_relayrl_class_of_a_nameable_kind_is_listed_or_left_out_with_a_reason():
    found = set()
    for info in pkgutil.walk_packages(relayrl.__path__, "relayrl."):
        if info.name == "relayrl.__main__" or info.name.startswith("relayrl.testing"):
            continue
        for obj in vars(importlib.import_module(info.name)).values():
            if isinstance(obj, type) and obj.__module__ == info.name and checkpoint_kind(obj) is not None:
                found.add(f"{obj.__module__}:{obj.__qualname__}")
    listed = {f"{module}:{name}" for module, names in NAMEABLE.items() for name in names}
    assert found - listed - set(NOT_NAMEABLE) == set(), "add these to NAMEABLE or NOT_NAMEABLE (with the reason)"
    assert set(NOT_NAMEABLE) <= found, "NOT_NAMEABLE names classes that no longer exist"
