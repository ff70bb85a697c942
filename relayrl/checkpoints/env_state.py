"""The state of the envs a runner steps, and the decision, made when a checkpoint is saved, whether the runner's
ongoing episodes can resume from it.

`capture_vector_env_state(vector_env)` is what runners call when saving: it gives the state of every sub-env, or
the reason it cannot (then the checkpoint records that reason and the restored runner starts fresh episodes,
keeping everything else; `log_fresh_episodes` says so once). A sub-env's whole state is captured when each
layer of its wrapper chain (outermost wrapper down to `env.unwrapped`) either defines `get_state()` /
`set_state(state)` (which then covers everything below it) or holds only

- data: numbers, bools, str, None, numpy arrays, and lists / tuples / dicts of those (stored),
- random generators: numpy Generators, `random.Random`, the generators of its gymnasium spaces (stored),
- structure: gymnasium spaces, its EnvSpec, the env a wrapper wraps, functions and classes (left as they are).

Anything else (another env in an attribute, a simulator handle, a deque, a set) means the state is not
captured. gymnasium's classic envs hold only such data, so they resume bit-identically.

Restoring sets only attributes the live layer holds as data (or not at all), each to a value of the same kind (an
array of the same shape and dtype, a generator state, ...); anything else is refused before any env changes
(`check_vector_env_state`): a checkpoint cannot replace methods, properties or objects.
"""
import copy
import inspect
import logging
import random
from typing import Any, Dict, List, Optional, Tuple

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from relayrl.checkpoints.codec import Encoder, make_generator
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.state_checks import Where, check_generator_state, check_mapping, check_tensor, require

logger = logging.getLogger("relayrl")

GENERATOR_KEY = "__np_generator_state__"
PY_RANDOM_KEY = "__py_random_state__"
SPACE_RNGS_KEY = "__space_rngs__"  # the generator states of a space and its sub-spaces, depth first (None: unseeded)
_MAX_DEPTH = 8  # nesting of data containers


class EnvStateNotCaptured(Exception):
    """An env holds state a checkpoint cannot store; the message names where."""


# -- what a layer holds ------------------------------------------------------------------------------
def _is_data(value: Any, depth: int = 0) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return not value.dtype.hasobject
    if depth >= _MAX_DEPTH:
        return False
    if type(value) in (list, tuple):
        return all(_is_data(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(_is_data(k, depth + 1) and not isinstance(k, np.ndarray) and _is_data(v, depth + 1)
                   for k, v in value.items())
    return False


def _is_structure(layer, name: str, value: Any) -> bool:
    if name == "env" and isinstance(layer, gym.Wrapper):
        return True  # the next layer of the chain
    return isinstance(value, (gym.Space, EnvSpec, type)) or inspect.isroutine(value)


def _spaces_of(space: gym.Space) -> List[gym.Space]:
    """The space and its sub-spaces, depth first (each may keep its own generator)."""
    inner = space.spaces.values() if isinstance(space, gym.spaces.Dict) else \
        space.spaces if isinstance(space, gym.spaces.Tuple) else ()
    return [space] + [s for sub in inner for s in _spaces_of(sub)]


def _generator_state(rng) -> Optional[dict]:
    return None if rng is None else rng.bit_generator.state


def _layer_state(layer) -> Dict[str, Any]:
    """The layer's data and generators; EnvStateNotCaptured naming the first attribute that holds anything else."""
    out = {}
    for name, value in vars(layer).items():
        if isinstance(value, np.random.Generator):
            out[name] = {GENERATOR_KEY: value.bit_generator.state}
        elif isinstance(value, random.Random):
            out[name] = {PY_RANDOM_KEY: value.getstate()}
        elif isinstance(value, gym.Space):
            rngs = [_generator_state(s._np_random) for s in _spaces_of(value)]
            if any(r is not None for r in rngs):
                out[name] = {SPACE_RNGS_KEY: rngs}
        elif _is_data(value):
            out[name] = copy.deepcopy(value)
        elif not _is_structure(layer, name, value):
            raise EnvStateNotCaptured(f"{type(layer).__name__}.{name} holds a {type(value).__module__}."
                                      f"{type(value).__qualname__}")
    return out


def _has_state_api(env) -> bool:
    return callable(getattr(type(env), "get_state", None)) and callable(getattr(type(env), "set_state", None))


def _layers(env) -> List[Any]:
    layers = [env]
    while hasattr(layers[-1], "env") and layers[-1] is not getattr(layers[-1], "unwrapped", layers[-1]):
        layers.append(layers[-1].env)
    return layers


# -- saving --------------------------------------------------------------------------------------------
def get_env_state(env) -> List[Dict[str, Any]]:
    """One entry per wrapper layer: {"class": name, "state": ..., "own_api": bool}; EnvStateNotCaptured if a layer
    holds state that cannot be stored."""
    states = []
    for layer in _layers(env):
        if _has_state_api(layer):
            state = layer.get_state()
            try:
                Encoder().encode(state, f"{type(layer).__name__}.get_state()")
            except CheckpointError as error:
                raise EnvStateNotCaptured(str(error)) from None
            states.append({"class": type(layer).__qualname__, "own_api": True, "state": state})
            break  # an env with its own get_state() covers everything below it
        states.append({"class": type(layer).__qualname__, "own_api": False, "state": _layer_state(layer)})
    return states


def get_vector_env_state(vector_env) -> Dict[str, Any]:
    """The vector env's own plain attributes and each sub-env's state (vector envs that step their sub-envs in
    this process)."""
    return {"vector": _vector_attributes(vector_env), "sub_envs": [get_env_state(e) for e in vector_env.envs]}


def _vector_attributes(vector_env) -> Dict[str, Any]:
    """The vector env's numbers, arrays and generators (its sub-envs and spaces are structure)."""
    out = {}
    for name, value in vars(vector_env).items():
        if isinstance(value, np.random.Generator):
            out[name] = {GENERATOR_KEY: value.bit_generator.state}
        elif isinstance(value, np.ndarray) and not value.dtype.hasobject:
            out[name] = value.copy()
        elif value is None or isinstance(value, (bool, int, float, np.generic)):
            out[name] = value
    return out


def capture_vector_env_state(vector_env) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """The decision runners make when saving: (the state of every sub-env, None) when all of it is captured, so
    the ongoing episodes resume exactly; else (None, why not), which the checkpoint records."""
    if isinstance(vector_env, gym.vector.AsyncVectorEnv):
        return None, "its sub-envs run in other processes (gym_env_vectorize_mode='ASYNC')"
    if not isinstance(getattr(vector_env, "envs", None), list):
        return None, f"the {type(vector_env).__name__} keeps its sub-envs' state out of reach (a native vector env)"
    try:
        return get_vector_env_state(vector_env), None
    except EnvStateNotCaptured as why:
        return None, (f"{why}, which a checkpoint cannot store; define get_state() and set_state() on the env to "
                      "resume its episodes exactly")


def env_config_key(env_config) -> Any:
    """env_config as comparable data (objects in it compare by type): saved with the envs' state, so that a runner
    whose env_config changed since (PBT, reset_config) starts fresh episodes instead of taking envs made with the
    old settings."""
    from relayrl.checkpoints.by_name import describe

    return describe(dict(env_config or {}))


def env_config_changed(sampling_state: Dict[str, Any], env_config) -> bool:
    """Whether a runner's saved sampling state holds envs made with other env_config settings than `env_config`
    (a PBT exploit or reset_config changed them before the restore): their state holds the old settings (`self.size
    = config["size"]`), so fresh episodes start on the envs made with the new ones instead."""
    return "env_config" in sampling_state and sampling_state["env_config"] != env_config_key(env_config)


FRESH_EPISODES_NOTE = ("Resuming with fresh episodes: when the checkpoint was saved, the env's state could not be "
                       "captured (%s). Weights, optimizer, counters, connector states and replay buffers are restored; "
                       "what was set on the envs after they were made (a curriculum's set_task) is not: re-apply it "
                       "in your callbacks' on_checkpoint_loaded (docs/checkpoints.md, 'A curriculum after a "
                       "restore').")


def log_fresh_episodes(why: str) -> None:
    """Said once per restore, by the runner that starts fresh episodes."""
    logger.warning(FRESH_EPISODES_NOTE, why)


def fresh_episodes_seed(config_seed: Optional[int], worker_index: int, env_steps: int) -> Optional[int]:
    """The seed of the fresh episodes a restored runner starts (so a resumed run is reproducible): from the
    config's seed, the runner and how far it had sampled; None without a config seed."""
    if config_seed is None:
        return None
    return int(np.random.SeedSequence([int(config_seed), int(worker_index), int(env_steps)]).generate_state(1)[0])


# -- checking and restoring ---------------------------------------------------------------------------
_ABSENT = object()


def _live_value(obj, name: str) -> Any:
    """The attribute's current value (on the instance, or a class default such as gymnasium's `_np_random =
    None`); `_ABSENT` if neither has it (an attribute set at reset, such as Pendulum's `state`)."""
    value = vars(obj).get(name, _ABSENT)
    return inspect.getattr_static(type(obj), name, _ABSENT) if value is _ABSENT else value


def _check_layer_state(obj, state: Any, where: Where) -> None:
    """Each stored attribute is data where `obj` holds data (or nothing) under that name, and keeps its kind
    (arrays their shape and dtype, generators their kind): a checkpoint cannot replace methods or objects."""
    check_mapping(state, where, owner=f"a {type(obj).__name__}")
    for name, value in state.items():
        require(isinstance(name, str) and name.isidentifier() and not name.startswith("__"), where / str(name),
                "not an attribute name.")
        live = _live_value(obj, name)
        if value is None and live is not _ABSENT and not _is_data(live):
            continue  # was empty when saved, holds an object now (e.g. gymnasium's `_cached_spec`): left as it is
        marker = next(iter(value)) if isinstance(value, dict) and len(value) == 1 else None
        empty = live is _ABSENT or live is None
        if marker == GENERATOR_KEY:
            require(empty or isinstance(live, np.random.Generator), where / name,
                    "a generator state where the env keeps no generator.")
            check_generator_state(value[GENERATOR_KEY], where / name)
        elif marker == PY_RANDOM_KEY:
            require(empty or isinstance(live, random.Random), where / name,
                    "a random.Random state where the env keeps none.")
            _check_py_random_state(value[PY_RANDOM_KEY], where / name)
        elif marker == SPACE_RNGS_KEY:
            rngs = value[SPACE_RNGS_KEY]
            require(isinstance(live, gym.Space) and isinstance(rngs, list) and len(rngs) == len(_spaces_of(live)),
                    where / name, f"space generators where the env has {type(live).__name__}.")
            for i, rng in enumerate(rngs):
                if rng is not None:
                    check_generator_state(rng, where / name / i)
        else:
            require(empty or _is_data(live), where / name,
                    f"{type(obj).__name__} has no plain-data attribute {name!r}; the checkpoint was written for "
                    "another env, or was changed.")
            require(_is_data(value), where / name, f"expected data, found {type(value).__name__}.")
            if isinstance(value, np.ndarray) and isinstance(live, np.ndarray):
                check_tensor(live, value, where / name, f"the live {type(obj).__name__}")


def _check_py_random_state(state: Any, where: Where) -> None:
    try:
        version, internal, gauss = state
        random.Random().setstate((version, tuple(internal), gauss))
    except (TypeError, ValueError) as error:
        raise where.error(f"not a random.Random state ({error}).") from None


def _set_layer_state(obj, state: Dict[str, Any]) -> None:
    for name, value in state.items():
        live = _live_value(obj, name)
        if value is None and live is not _ABSENT and not _is_data(live):
            continue
        marker = next(iter(value)) if isinstance(value, dict) and len(value) == 1 else None
        if marker == GENERATOR_KEY:
            inner = value[GENERATOR_KEY]
            same_kind = isinstance(live, np.random.Generator) and \
                type(live.bit_generator).__name__ == inner.get("bit_generator")
            if same_kind:
                live.bit_generator.state = inner
            else:
                setattr(obj, name, make_generator(inner))
        elif marker == PY_RANDOM_KEY:
            version, internal, gauss = value[PY_RANDOM_KEY]
            rng = live if isinstance(live, random.Random) else random.Random()
            rng.setstate((version, tuple(internal), gauss))
            setattr(obj, name, rng)
        elif marker == SPACE_RNGS_KEY:
            for space, rng in zip(_spaces_of(live), value[SPACE_RNGS_KEY]):
                space._np_random = None if rng is None else make_generator(rng)
        else:
            setattr(obj, name, copy.deepcopy(value))


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
        _check_layer_state(layer, entry["state"], where / i / "state")


def set_env_state(env, states: List[Dict[str, Any]]) -> None:
    layers = _layers(env)
    for layer, entry in zip(layers, states):
        if type(layer).__qualname__ != entry["class"]:
            raise CheckpointError(f"The env's wrapper chain changed since the checkpoint: found "
                                  f"{type(layer).__qualname__} where it had {entry['class']}.")
        if entry["own_api"]:
            layer.set_state(entry["state"])
            return
        _set_layer_state(layer, entry["state"])


def check_vector_env_state(vector_env, state: Any, where: Where) -> None:
    check_mapping(state, where, known=("vector", "sub_envs"), required=("vector", "sub_envs"), owner="a vector env")
    sub_envs = state["sub_envs"]
    require(isinstance(sub_envs, list) and len(sub_envs) == len(vector_env.envs), where / "sub_envs",
            f"the checkpoint has {len(sub_envs) if isinstance(sub_envs, list) else sub_envs!r} sub-envs, this "
            f"EnvRunner {len(vector_env.envs)}: set num_envs_per_env_runner as when it was saved.")
    _check_layer_state(vector_env, state["vector"], where / "vector")
    for i, (env, env_state) in enumerate(zip(vector_env.envs, sub_envs)):
        check_env_state(env, env_state, where / "sub_envs" / i)


def set_vector_env_state(vector_env, state: Dict[str, Any]) -> None:
    if len(state["sub_envs"]) != len(vector_env.envs):
        raise CheckpointError(f"The checkpoint has {len(state['sub_envs'])} sub-envs, this EnvRunner "
                              f"{len(vector_env.envs)}: set num_envs_per_env_runner as when it was saved.")
    _set_layer_state(vector_env, state["vector"])
    for env, env_state in zip(vector_env.envs, state["sub_envs"]):
        set_env_state(env, env_state)
