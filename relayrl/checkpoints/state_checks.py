"""Checking a state against the live object before anything is set, so a restore is all-or-nothing.

Every `check_state(state, where)` raises one CheckpointError naming where the problem is (the
checkpoint file and the key inside it), what the checkpoint holds and what the live object expects;
it changes nothing. `set_state` runs only after every component's check passed.
"""
import copy
import numbers
import random
from typing import Any, Callable, Collection, Mapping, Optional

import numpy as np
import torch

from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.format import STATE_FILE


class Where:
    """A place in a state: the checkpoint file it was read from and the key path inside it."""

    def __init__(self, file: str, path: str = "", root: Optional[str] = None):
        self.file, self.path, self.root = file, path, root

    @classmethod
    def checkpoint(cls, root) -> "Where":
        return cls(f"{root}/{STATE_FILE}", root=str(root))

    @classmethod
    def in_memory(cls, owner: str) -> "Where":
        return cls(f"the state given to {owner}.set_state()")

    def component(self, name: str) -> "Where":
        """A component's state: its own folder's state.json in a checkpoint."""
        if self.root is not None and not self.path:
            return Where(f"{self.root}/{name}/{STATE_FILE}", root=f"{self.root}/{name}")
        return self / name

    def __truediv__(self, key: Any) -> "Where":
        return Where(self.file, f"{self.path}.{key}" if self.path else str(key))

    def __str__(self) -> str:
        return f"{self.file}, `{self.path}`" if self.path else self.file

    def error(self, message: str) -> CheckpointError:
        return CheckpointError(f"{self}: {message}")


def require(condition: bool, where: Where, message: str) -> None:
    if not condition:
        raise where.error(message)


def check_mapping(state: Any, where: Where, *, known: Optional[Collection[str]] = None,
                  required: Collection[str] = (), owner: str = "this object") -> Mapping:
    """`state` is a dict whose keys are all `known` (None: any) and include `required`."""
    require(isinstance(state, Mapping), where, f"expected a dict, found {type(state).__name__}.")
    unknown = [k for k in state if k not in known] if known is not None else []
    if unknown:
        raise where.error(f"{unknown[0]!r} is not part of the state of {owner} (it has {sorted(map(str, known))}); "
                          "the checkpoint was written by something else.")
    missing = [k for k in required if k not in state]
    if missing:
        raise where.error(f"{missing[0]!r} is missing.")
    return state


def check_int(value: Any, where: Where, *, low: Optional[int] = None) -> None:
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and (low is None or value >= low)
    require(ok, where, f"expected an int{f' >= {low}' if low is not None else ''}, found {value!r}.")


def check_real(value: Any, where: Where) -> None:
    require(isinstance(value, numbers.Real) and not isinstance(value, bool), where,
            f"expected a number, found {value!r}.")


def _shape_and_dtype(value: Any):
    if isinstance(value, torch.Tensor):
        return tuple(value.shape), str(value.dtype).replace("torch.", "")
    if isinstance(value, np.ndarray):
        return tuple(value.shape), str(value.dtype)
    return None


def check_tensor(live: Any, stored: Any, where: Where, owner: str) -> None:
    """`stored` is an array or tensor with the live one's shape and dtype."""
    live_sd, stored_sd = _shape_and_dtype(live), _shape_and_dtype(stored)
    require(stored_sd is not None, where, f"expected an array of shape {live_sd[0]}, found {type(stored).__name__}.")
    require(stored_sd[0] == live_sd[0], where,
            f"shape {stored_sd[0]} in the checkpoint, {live_sd[0]} in {owner}; the checkpoint was saved with "
            "another model (e.g. other fcnet_hiddens) or another env.")
    require(stored_sd[1] == live_sd[1], where, f"dtype {stored_sd[1]} in the checkpoint, {live_sd[1]} in {owner}.")


def check_weights(live: Mapping[str, Any], stored: Any, where: Where, owner: str, *,
                  allow_missing: bool = False) -> None:
    """Same parameter names as the live state dict, each with its shape and dtype. `allow_missing`: the stored
    names may be a part of the live ones (a module that adds a head to a trained one), but not none of them."""
    check_mapping(stored, where, owner=owner)
    missing = [k for k in live if k not in stored]
    unexpected = [k for k in stored if k not in live]
    partial_ok = allow_missing and len(missing) < len(live)
    require((partial_ok or not missing) and not unexpected, where,
            f"the parameters differ from {owner}'s: missing {missing[:5]}, unexpected {unexpected[:5]}; the "
            "checkpoint was saved with another model or algorithm.")
    for name, value in live.items():
        if name in stored:
            check_tensor(value, stored[name], where / name, owner)


def check_optimizer_state(optimizer: torch.optim.Optimizer, stored: Any, where: Where) -> None:
    """torch's optimizer state dict for the same parameter groups, each moment shaped like its parameter."""
    check_mapping(stored, where, required=("state", "param_groups"), owner="an optimizer")
    groups, stored_groups = optimizer.param_groups, stored["param_groups"]
    require(isinstance(stored_groups, list) and len(stored_groups) == len(groups), where / "param_groups",
            f"{len(stored_groups) if isinstance(stored_groups, list) else stored_groups!r} parameter groups in the "
            f"checkpoint, {len(groups)} in {type(optimizer).__name__}.")
    params = []
    for i, (group, stored_group) in enumerate(zip(groups, stored_groups)):
        ids = stored_group.get("params") if isinstance(stored_group, Mapping) else None
        require(isinstance(ids, list) and len(ids) == len(group["params"]), where / f"param_groups[{i}]",
                f"a group of {len(ids) if isinstance(ids, list) else ids!r} parameters in the checkpoint, "
                f"{len(group['params'])} in the optimizer.")
        params += list(zip(ids, group["params"]))
    moments = check_mapping(stored["state"], where / "state", owner="an optimizer")
    for param_id, param in params:
        for key, value in (moments.get(param_id) or {}).items():
            if isinstance(value, torch.Tensor) and value.dim() > 0:
                check_tensor(param.detach(), value, where / f"state[{param_id}].{key}", "the optimizer's parameter")


def check_like(live: Any, stored: Any, where: Where, owner: str) -> None:
    """A fixed-layout state (e.g. an exploration schedule's): same keys, kinds and array shapes as the live one."""
    if isinstance(live, Mapping):
        check_mapping(stored, where, known=list(live), owner=owner)
        for key, value in stored.items():
            check_like(live[key], value, where / key, owner)
    elif _shape_and_dtype(live) is not None:
        check_tensor(live, stored, where, owner)
    elif isinstance(live, bool) or isinstance(live, str):
        require(type(stored) is type(live), where, f"expected a {type(live).__name__}, found {stored!r}.")
    elif isinstance(live, numbers.Real):
        check_real(stored, where)
    elif isinstance(live, (list, tuple)):
        require(isinstance(stored, (list, tuple)), where, f"expected a list, found {type(stored).__name__}.")


def check_by_trial(make_scratch: Callable[[], Any], state: Any, where: Where) -> None:
    """Set `state` on a throwaway object (`make_scratch()`); any error becomes a CheckpointError."""
    try:
        make_scratch().set_state(copy.deepcopy(state))
    except CheckpointError:
        raise
    except Exception as error:  # a malformed state fails in whatever way the object's set_state fails
        raise where.error(f"cannot be restored ({type(error).__name__}: {error}).") from None


def check_rng_state(state: Any, where: Where) -> None:
    """Python's, numpy's and torch's global generator states, tried on throwaway generators."""
    check_mapping(state, where, known=("python", "numpy", "torch"), required=("python", "numpy", "torch"),
                  owner="the random generators")
    try:
        version, internal, gauss = state["python"]
        random.Random().setstate((version, tuple(internal), gauss))
        np.random.RandomState().set_state(tuple(state["numpy"]))
        require(isinstance(state["torch"], torch.Tensor), where / "torch", "expected a tensor.")
        torch.Generator().set_state(state["torch"])
    except CheckpointError:
        raise
    except Exception as error:
        raise where.error(f"not a valid generator state ({type(error).__name__}: {error}).") from None


def check_generator_state(state: Any, where: Where) -> None:
    """A numpy Generator's `bit_generator.state`, tried on a throwaway generator."""
    from relayrl.checkpoints.codec import make_generator

    check_mapping(state, where, owner="a numpy generator")
    try:
        make_generator(state)
    except Exception as error:  # an unknown bit generator (CheckpointError) or a malformed state
        raise where.error(f"not a valid numpy generator state ({error}).") from None


def unexpected_error(where: Where, error: Exception) -> CheckpointError:
    """A check that tripped over malformed data in a way no explicit check foresaw."""
    return where.error(f"malformed state ({type(error).__name__}: {error}).")

