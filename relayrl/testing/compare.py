"""`assert_same_tree`: exact equality of nested results (states, episodes' contents) in tests."""
import sys

import numpy as np


def assert_same_tree(a, b, where: str = "value", strict_types: bool = False) -> None:
    """Assert `a` equals `b` exactly: nested dicts, lists and tuples of torch tensors, numpy arrays and plain
    values. A failure names the path to the first difference (`where.key[i]`).

    With `strict_types`, item types, array dtypes and shapes must match too (e.g. a numpy float64 is not
    a Python float), for checking that two code paths build the very same objects.
    """
    torch = sys.modules.get("torch")  # a tensor can only exist once torch is imported
    if torch is not None and isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{where}: keys {sorted(a)} != {_keys(b)}"
        for key in a:
            assert_same_tree(a[key], b[key], f"{where}.{key}", strict_types)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) or not strict_types, f"{where}: {type(a).__name__} != {type(b).__name__}"
        assert len(a) == len(b), f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_tree(x, y, f"{where}[{i}]", strict_types)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if strict_types:
            assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape, (
                f"{where}: {_describe(a)} != {_describe(b)}")
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert type(a) is type(b) or not strict_types, f"{where}: {type(a).__name__} != {type(b).__name__}"
        assert a == b, f"{where}: {a!r} != {b!r}"


def _keys(value):
    return sorted(value) if isinstance(value, dict) else type(value).__name__


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{type(value).__name__}({value.dtype}, shape {value.shape})"
    return type(value).__name__


def assert_learners_in_sync(learner_group) -> None:
    """Every Learner of a group (remote ones included) holds the same module weights, bit for bit (DDP keeps
    replicas identical)."""
    states = learner_group.foreach_learner(
        lambda learner: {k: v.detach().cpu().numpy() for k, v in learner.module.state_dict().items()})
    for i, state in enumerate(states[1:], start=1):
        assert_same_tree(state, states[0], f"learner[{i}] vs learner[0]")
