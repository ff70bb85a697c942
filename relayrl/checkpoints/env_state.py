"""The plain-data state of gymnasium envs, so a restored EnvRunner continues its episodes bit-identically.

The rule: an env (or wrapper) that defines both `get_state()` and `set_state(state)` is saved with
those. Otherwise each layer of the wrapper chain (outermost wrapper down to `env.unwrapped`)
contributes its attributes that are numpy arrays, numbers, bools, None or numpy Generators
(their `bit_generator.state`). Anything else (lists, dicts, objects, simulator handles) is not
stored: such envs should define get_state/set_state.

Restoring sets only attributes the live layer has, each to a value of the same kind (an array of
the same shape and dtype, a number, a generator state); anything else is refused before any env
changes (`check_vector_env_state`).
"""
import inspect
import numbers
from typing import Any, Dict, List

import numpy as np

from relayrl.checkpoints.codec import make_generator
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.state_checks import Where, check_generator_state, check_mapping, check_tensor, require

GENERATOR_KEY = "__np_generator_state__"


def _plain_attributes(obj) -> Dict[str, Any]:
    out = {}
    for name, value in vars(obj).items():
        if isinstance(value, np.random.Generator):
            out[name] = {GENERATOR_KEY: value.bit_generator.state}
        elif isinstance(value, np.ndarray):
            if not value.dtype.hasobject:
                out[name] = value.copy()
        elif _is_plain_value(value):
            out[name] = value
    return out


def _is_plain_value(value: Any) -> bool:
    return value is None or isinstance(value, (bool, numbers.Number, np.generic))


_NOT_PLAIN, _ABSENT = object(), object()


def _current_plain_value(obj, name: str) -> Any:
    """The attribute's current value if it holds plain data (on the instance, or a class default such as
    gymnasium's `_np_random = None`); `_ABSENT` if neither has it (an attribute set at reset, such as
    Pendulum's `state`); `_NOT_PLAIN` for methods, properties and objects, which a checkpoint never sets."""
    value = vars(obj).get(name, _ABSENT)
    if value is _ABSENT:
        value = inspect.getattr_static(type(obj), name, _ABSENT)
        if value is _ABSENT:
            return _ABSENT
    plain = isinstance(value, (np.random.Generator, np.ndarray)) or _is_plain_value(value)
    return value if plain else _NOT_PLAIN


def _check_plain_attributes(obj, state: Any, where: Where) -> None:
    """Each stored attribute is plain data where `obj` holds plain data (or nothing) under that name, and keeps
    its kind (arrays their shape and dtype): a checkpoint cannot replace methods, properties or objects."""
    check_mapping(state, where, owner=f"a {type(obj).__name__}")
    for name, value in state.items():
        current = _current_plain_value(obj, name)
        if value is None and current is _NOT_PLAIN:  # was empty when saved, holds an object now: left as it is
            continue
        require(current is not _NOT_PLAIN and name.isidentifier() and not name.startswith("__"), where / name,
                f"{type(obj).__name__} has no plain-data attribute {name!r}; the checkpoint was written for "
                "another env, or was changed.")
        if current is _ABSENT:
            current = None
        if isinstance(value, dict):
            require(set(value) == {GENERATOR_KEY} and (current is None or isinstance(current, np.random.Generator)),
                    where / name, "expected a generator state where the env keeps a generator.")
            check_generator_state(value[GENERATOR_KEY], where / name)
        elif isinstance(value, np.ndarray):
            if isinstance(current, np.ndarray):
                check_tensor(current, value, where / name, f"the live {type(obj).__name__}")
            else:
                require(current is None, where / name, f"an array in the checkpoint, {current!r} in the env.")
        else:
            require(_is_plain_value(value), where / name, f"expected a number, bool or None, found {value!r}.")


def _set_plain_attributes(obj, state: Dict[str, Any]) -> None:
    for name, value in state.items():
        if value is None and _current_plain_value(obj, name) is _NOT_PLAIN:
            continue  # e.g. gymnasium's `_cached_spec`: None when saved, the EnvSpec now
        if isinstance(value, dict) and GENERATOR_KEY in value:
            current = getattr(obj, name, None)
            if isinstance(current, np.random.Generator) and \
                    type(current.bit_generator).__name__ == value[GENERATOR_KEY].get("bit_generator"):
                current.bit_generator.state = value[GENERATOR_KEY]
            else:
                setattr(obj, name, make_generator(value[GENERATOR_KEY]))
        elif isinstance(value, np.ndarray):
            setattr(obj, name, value.copy())
        else:
            setattr(obj, name, value)


def _has_state_api(env) -> bool:
    return callable(getattr(type(env), "get_state", None)) and callable(getattr(type(env), "set_state", None))


def _layers(env) -> List[Any]:
    layers = [env]
    while hasattr(layers[-1], "env") and layers[-1] is not getattr(layers[-1], "unwrapped", layers[-1]):
        layers.append(layers[-1].env)
    return layers


def get_env_state(env) -> List[Dict[str, Any]]:
    """One entry per wrapper layer: {"class": name, "state": ..., "own_api": bool}."""
    states = []
    for layer in _layers(env):
        if _has_state_api(layer):
            states.append({"class": type(layer).__qualname__, "own_api": True, "state": layer.get_state()})
            break  # an env with its own get_state() covers everything below it
        states.append({"class": type(layer).__qualname__, "own_api": False, "state": _plain_attributes(layer)})
    return states


def check_env_state(env, states: Any, where: Where) -> None:
    """The wrapper chain matches the stored one and each layer's stored attributes fit it."""
    require(isinstance(states, list), where, f"expected a list of wrapper layers, found {type(states).__name__}.")
    for i, (layer, entry) in enumerate(zip(_layers(env), states)):
        check_mapping(entry, where / i, known=("class", "own_api", "state"), required=("class", "own_api", "state"),
                      owner="an env layer")
        require(type(layer).__qualname__ == entry["class"], where / i,
                f"the env's wrapper chain changed since the checkpoint: found {type(layer).__qualname__} where it "
                f"had {entry['class']}.")
        if entry["own_api"]:
            require(_has_state_api(layer), where / i, f"{entry['class']} has no set_state() here.")
            return  # the env's own set_state checks its own state
        _check_plain_attributes(layer, entry["state"], where / i / "state")


def set_env_state(env, states: List[Dict[str, Any]]) -> None:
    layers = _layers(env)
    for layer, entry in zip(layers, states):
        if type(layer).__qualname__ != entry["class"]:
            raise CheckpointError(f"The env's wrapper chain changed since the checkpoint: found "
                                  f"{type(layer).__qualname__} where it had {entry['class']}.")
        if entry["own_api"]:
            layer.set_state(entry["state"])
            return
        _set_plain_attributes(layer, entry["state"])


def get_vector_env_state(vector_env) -> Dict[str, Any]:
    """The vector env's own plain attributes and each sub-env's state (sync vector envs only)."""
    return {"vector": _plain_attributes(vector_env), "sub_envs": [get_env_state(e) for e in vector_env.envs]}


def check_vector_env_state(vector_env, state: Any, where: Where) -> None:
    check_mapping(state, where, known=("vector", "sub_envs"), required=("vector", "sub_envs"), owner="a vector env")
    sub_envs = state["sub_envs"]
    require(isinstance(sub_envs, list) and len(sub_envs) == len(vector_env.envs), where / "sub_envs",
            f"the checkpoint has {len(sub_envs) if isinstance(sub_envs, list) else sub_envs!r} sub-envs, this "
            f"EnvRunner {len(vector_env.envs)}: set num_envs_per_env_runner as when it was saved.")
    _check_plain_attributes(vector_env, state["vector"], where / "vector")
    for i, (env, env_state) in enumerate(zip(vector_env.envs, sub_envs)):
        check_env_state(env, env_state, where / "sub_envs" / i)


def set_vector_env_state(vector_env, state: Dict[str, Any]) -> None:
    if len(state["sub_envs"]) != len(vector_env.envs):
        raise CheckpointError(f"The checkpoint has {len(state['sub_envs'])} sub-envs, this EnvRunner "
                              f"{len(vector_env.envs)}: set num_envs_per_env_runner as when it was saved.")
    _set_plain_attributes(vector_env, state["vector"])
    for env, env_state in zip(vector_env.envs, state["sub_envs"]):
        set_env_state(env, env_state)
