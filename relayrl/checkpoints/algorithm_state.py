"""What an Algorithm checkpoints, and rebuilding an Algorithm from a checkpoint alone.

State: iteration, counters, time_total_s, the metrics logger (the smoothing windows the next result
needs), python/numpy/torch RNG states, the config as JSON, and the components: learner_group,
env_runner (local), eval_env_runners (connector states), replay_buffer (`algo.local_replay_buffer`)
and callbacks (when they define get_state/set_state).
"""
import os
import random
from typing import Any, Dict, List, Optional

import numpy as np
import torch

from relayrl.checkpoints import by_name
from relayrl.checkpoints.checkpointable import checkpoint_class, selected
from relayrl.checkpoints.env_state import _plain_attributes, _set_plain_attributes
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.format import class_path, read_manifest, read_state

EVAL_RUNNER_PARTS = ["env_to_module_connector", "module_to_env_connector"]


# -- components ----------------------------------------------------------------------------------
def checkpointable_components(algo) -> List[tuple]:
    parts = [("learner_group", algo.learner_group)]
    if algo.env_runner is not None:
        parts.append(("env_runner", algo.env_runner))
    if getattr(algo, "eval_env_runner_group", None) is not None:
        parts.append(("eval_env_runners", algo.eval_env_runner_group))
    buffer = getattr(algo, "local_replay_buffer", None)
    if buffer is not None and callable(getattr(buffer, "get_state", None)):
        parts.append(("replay_buffer", buffer))
    if any(_has_state_api(obj) for obj in algo._callbacks.objects):
        parts.append(("callbacks", algo._callbacks))
    return parts


def _has_state_api(obj) -> bool:
    return callable(getattr(obj, "get_state", None)) and callable(getattr(obj, "set_state", None))


def _eval_runners(group) -> list:
    return ([group.local_env_runner] if group.local_env_runner is not None else []) + list(group.remote_env_runners)


def get_algorithm_state(algo, components=None, not_components=None) -> Dict[str, Any]:
    state: Dict[str, Any] = {}
    own = {
        "iteration": lambda: algo.iteration,
        "time_total_s": lambda: algo._time_total_s,
        "counters": lambda: dict(algo._counters),
        "metrics_logger": lambda: algo.metrics.get_state(),
        "rng": rng_state,
        "config": lambda: config_to_json(algo.config),
        # Plain-data attributes algorithms add (e.g. DQN's fractional update count carried between steps).
        "attributes": lambda: {k: v for k, v in _plain_attributes(algo).items() if v is not None},
    }
    for name, get in own.items():
        if selected(name, components, not_components):
            state[name] = get()
    sub_paths = _sub_paths(components), _sub_paths(not_components)
    for name, obj in checkpointable_components(algo):
        if not selected(name, components, not_components):
            continue
        inner, inner_not = sub_paths[0].get(name), sub_paths[1].get(name)
        if name == "eval_env_runners":
            state[name] = [r.get_state(components=EVAL_RUNNER_PARTS) for r in _eval_runners(obj)]
        elif name == "callbacks":
            state[name] = [o.get_state() if _has_state_api(o) else None for o in obj.objects]
        elif name == "replay_buffer":
            state[name] = obj.get_state()
        else:
            state[name] = obj.get_state(components=inner, not_components=inner_not)
    return state


def _sub_paths(value) -> Dict[str, list]:
    """{"learner_group": ["learner/rl_module"]} from ["learner_group/learner/rl_module", ...]."""
    if value is None:
        return {}
    out: Dict[str, list] = {}
    for path in [value] if isinstance(value, str) else value:
        head, _, rest = path.partition("/")
        if rest:
            out.setdefault(head, []).append(rest)
    return out


def set_algorithm_state(algo, state: Dict[str, Any]) -> None:
    if "iteration" in state:
        algo.iteration = int(state["iteration"])
    if "time_total_s" in state:
        algo._time_total_s = float(state["time_total_s"])
    if "counters" in state:
        algo._counters = dict(state["counters"])
    if "metrics_logger" in state:
        algo.metrics.set_state(state["metrics_logger"])
    if "attributes" in state:
        _set_plain_attributes(algo, state["attributes"])
    if "learner_group" in state:
        algo.learner_group.set_state(state["learner_group"])
    if "env_runner" in state and algo.env_runner is not None:
        algo.env_runner.set_state(state["env_runner"])
    group = getattr(algo, "eval_env_runner_group", None)
    if state.get("eval_env_runners") and group is not None:
        runners = _eval_runners(group)
        for i, runner in enumerate(runners):  # extra eval runners take the first one's state
            runner.set_state(state["eval_env_runners"][min(i, len(state["eval_env_runners"]) - 1)])
    buffer = getattr(algo, "local_replay_buffer", None)
    if "replay_buffer" in state and buffer is not None:
        buffer.set_state(state["replay_buffer"])
    if "callbacks" in state:
        for obj, obj_state in zip(algo._callbacks.objects, state["callbacks"]):
            if obj_state is not None and _has_state_api(obj):
                obj.set_state(obj_state)
    if "learner_group" in state and "env_runner" not in state:
        algo.sync_weights()  # runners act with the restored weights
    group = algo.env_runner_group
    num_remote = getattr(group, "num_remote_env_runners", 0)
    if "learner_group" in state and (num_remote() if callable(num_remote) else num_remote):
        # Remote runners' episodes are not stored: they get the weights and connector states, then sample anew.
        group.sync_weights(from_worker_or_learner_group=algo.learner_group, connector_states_from=algo.env_runner)
    if "rng" in state:  # last: building and syncing above must not advance the restored generators
        set_rng_state(state["rng"])


# -- RNGs ----------------------------------------------------------------------------------------
def rng_state() -> Dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: Dict[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    np.random.set_state(tuple(state["numpy"]))
    torch.set_rng_state(state["torch"])


# -- config <-> JSON -------------------------------------------------------------------------------
def config_to_json(config) -> Dict[str, Any]:
    """The config as JSON: options that are classes/functions by "module:qualname"; lambdas and
    closures are marked unstorable (saving still works; from_checkpoint asks for them)."""
    algo_class = getattr(config, "_algo_class", None)
    return {
        "class": class_path(config),
        "algo_class": by_name.describe(algo_class) if algo_class is not None else None,
        "options": by_name.describe(config.to_dict()),
    }


def config_from_json(data: Dict[str, Any], overrides: Optional[Dict[str, Any]] = None):
    from relayrl.algorithms.algorithm_config import AlgorithmConfig

    config_cls = by_name.import_by_name(data["class"])
    if not (isinstance(config_cls, type) and issubclass(config_cls, AlgorithmConfig)):
        raise CheckpointError(f"The checkpoint's config class {data['class']!r} is not an AlgorithmConfig.")
    options = by_name.rebuild(data["options"])
    overrides = dict(overrides or {})
    config = config_cls()
    table = config._option_table
    override_names = {table.resolve(k, owner=config_cls.__name__).name for k in overrides}
    for key, value in list(options.items()):
        if table.resolve(key, owner=config_cls.__name__).name in override_names:
            options.pop(key)
            continue
        missing = by_name.find_unstorable(value)
        if missing:
            where, marker = missing[0]
            where = f"{key}{'.' + where if where and not where.startswith('[') else where}"
            raise CheckpointError(
                f"The config option `{key}` could not be stored in the checkpoint (`{where}` is {marker.description}). "
                f"Pass it again: Algorithm.from_checkpoint(path, config_overrides={{'{key}': ...}}), or use a "
                "module-level function / class (or register_env(name, creator) for envs) so it is stored by name.")
    config.update_from_dict(options)
    if overrides:
        config.update_from_dict(overrides)
    algo_class = data.get("algo_class")
    if algo_class is not None:
        config.algo_class = by_name.rebuild(algo_class)
    return config


def algorithm_from_checkpoint(cls, path, *, config=None, config_overrides: Optional[Dict[str, Any]] = None):
    """Build the checkpoint's Algorithm class with its stored config (or `config`), then restore its state."""
    path = os.fspath(path)
    manifest = read_manifest(path)
    algo_cls = checkpoint_class(manifest, cls, path)
    state = read_state(path, manifest)
    if config is None:
        if "config" not in state:
            raise CheckpointError(f"{path} holds no config: pass Algorithm.from_checkpoint(path, config=...).")
        config = config_from_json(state["config"], config_overrides)
    elif config_overrides:
        config = config.copy(copy_frozen=False).update_from_dict(config_overrides)
    algo = algo_cls(config=config)
    algo.set_state(state)
    return algo
