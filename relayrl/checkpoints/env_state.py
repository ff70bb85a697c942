"""The plain-data state of gymnasium envs, so a restored EnvRunner continues its episodes bit-identically.

The rule: an env (or wrapper) that defines both `get_state()` and `set_state(state)` is saved with
those. Otherwise each layer of the wrapper chain (outermost wrapper down to `env.unwrapped`)
contributes its attributes that are numpy arrays, numbers, bools, None or numpy Generators
(their `bit_generator.state`). Anything else (lists, dicts, objects, simulator handles) is not
stored: such envs should define get_state/set_state.
"""
import numbers
from typing import Any, Dict, List

import numpy as np

from relayrl.checkpoints.codec import make_generator
from relayrl.checkpoints.errors import CheckpointError

GENERATOR_KEY = "__np_generator_state__"


def _plain_attributes(obj) -> Dict[str, Any]:
    out = {}
    for name, value in vars(obj).items():
        if isinstance(value, np.random.Generator):
            out[name] = {GENERATOR_KEY: value.bit_generator.state}
        elif isinstance(value, np.ndarray):
            if not value.dtype.hasobject:
                out[name] = value.copy()
        elif value is None or isinstance(value, (bool, numbers.Number, np.generic)):
            out[name] = value
    return out


def _set_plain_attributes(obj, state: Dict[str, Any]) -> None:
    for name, value in state.items():
        if isinstance(value, dict) and GENERATOR_KEY in value:
            current = getattr(obj, name, None)
            if isinstance(current, np.random.Generator):
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


def set_vector_env_state(vector_env, state: Dict[str, Any]) -> None:
    if len(state["sub_envs"]) != len(vector_env.envs):
        raise CheckpointError(f"The checkpoint has {len(state['sub_envs'])} sub-envs, this EnvRunner "
                              f"{len(vector_env.envs)}: set num_envs_per_env_runner as when it was saved.")
    _set_plain_attributes(vector_env, state["vector"])
    for env, env_state in zip(vector_env.envs, state["sub_envs"]):
        set_env_state(env, env_state)
