"""What an EnvRunner checkpoints: module weights, connector and exploration states, counters, the
ongoing episodes with the batch already computed for them, and (sync vector envs) the envs' state.

With all of it restored, the next `sample()` continues exactly where the saved runner stopped.
ASYNC vector envs live in other processes: their runner restarts its episodes (next sample resets).
"""
from typing import Any, Dict

import gymnasium as gym

from relayrl.checkpoints.checkpointable import selected
from relayrl.checkpoints.codec import make_generator
from relayrl.checkpoints.env_state import (
    _plain_attributes,
    _set_plain_attributes,
    get_vector_env_state,
    set_vector_env_state,
)
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.env.single_agent_episode import SingleAgentEpisode

_SPACE_KEYS = ("observation_space", "action_space")
# Identity and layout of the runner (from its constructor and config), not sampling progress.
_NOT_RESTORED = {"worker_index", "num_workers", "recreated_worker", "num_envs", "_needs_reset", "_seed"}


def get_env_runner_state(runner, components=None, not_components=None) -> Dict[str, Any]:
    state: Dict[str, Any] = {}
    parts = {
        "rl_module": lambda: runner.module.get_state(inference_only=True),
        "env_to_module_connector": runner._env_to_module.get_state,
        "module_to_env_connector": runner._module_to_env.get_state,
    }
    exploration = getattr(runner, "exploration", None)
    if exploration is not None and callable(getattr(exploration, "get_state", None)):
        parts["exploration"] = exploration.get_state
    parts["metrics"] = lambda: runner.metrics.get_state()
    parts["sampling"] = lambda: _sampling_state(runner)
    for name, get in parts.items():
        if selected(name, components, not_components):
            state[name] = get()
    return state


def set_env_runner_state(runner, state: Dict[str, Any]) -> None:
    if "rl_module" in state:
        module_state = state["rl_module"]
        if DEFAULT_MODULE_ID in module_state and isinstance(module_state[DEFAULT_MODULE_ID], dict):
            module_state = module_state[DEFAULT_MODULE_ID]
        runner.module.set_state(module_state)
    if "env_to_module_connector" in state:
        runner._env_to_module.set_state(state["env_to_module_connector"])
    if "module_to_env_connector" in state:
        runner._module_to_env.set_state(state["module_to_env_connector"])
    exploration = getattr(runner, "exploration", None)
    if "exploration" in state and exploration is not None:
        exploration.set_state(state["exploration"])
    if "metrics" in state:
        runner.metrics.set_state(state["metrics"])
    if "sampling" in state:
        _set_sampling_state(runner, state["sampling"])


def _is_sync(runner) -> bool:
    return isinstance(runner.env, gym.vector.SyncVectorEnv)


def _episode_state(episode) -> Dict[str, Any]:
    state = episode.get_state()
    for key in _SPACE_KEYS:  # the runner's spaces: rebuilt from the config, not stored
        state.pop(key, None)
    for buffer_key in ("observations", "infos", "actions", "rewards"):
        state[buffer_key] = dict(state[buffer_key], space=None)
    state["extra_model_outputs"] = {k: dict(v, space=None) for k, v in state["extra_model_outputs"].items()}
    return state


def _episode_from_state(runner, state: Dict[str, Any]) -> SingleAgentEpisode:
    obs_space, act_space = runner._spaces["__env_single__"]
    episode = SingleAgentEpisode.from_state(dict(state, observation_space=obs_space, action_space=act_space))
    return episode


def _sampling_state(runner) -> Dict[str, Any]:
    state = {
        "seed": runner._seed,
        "episode_stats": [[k, list(v)] for k, v in runner._stats._carried.items()],
        "prev_chunks": {k: [_episode_state(e) for e in v] for k, v in runner._prev_chunks.items()},
        "action_space_rng": _space_rng(runner._spaces["__env_single__"][1]),
        # Counters the runner keeps as plain attributes (e.g. the lifetime step count exploration sees).
        "attributes": {k: v for k, v in _plain_attributes(runner).items()
                       if v is not None and k not in _NOT_RESTORED},
    }
    ongoing = not runner._needs_reset and _is_sync(runner)
    state["ongoing"] = ongoing
    if ongoing:
        state["episodes"] = [_episode_state(e) for e in runner._episodes]
        state["cached_to_module"] = runner._cached_to_module
        state["env"] = get_vector_env_state(runner.env)
    return state


def _set_sampling_state(runner, state: Dict[str, Any]) -> None:
    runner._seed = state["seed"]
    _set_plain_attributes(runner, state.get("attributes", {}))
    runner._stats._carried = {k: tuple(v) for k, v in state["episode_stats"]}
    runner._prev_chunks = {k: [_episode_from_state(runner, s) for s in v] for k, v in state["prev_chunks"].items()}
    rng = state.get("action_space_rng")
    if rng is not None:
        runner._spaces["__env_single__"][1]._np_random = make_generator(rng)
    if state["ongoing"] and _is_sync(runner) and len(state["episodes"]) == runner.num_envs:
        set_vector_env_state(runner.env, state["env"])
        runner._episodes = [_episode_from_state(runner, s) for s in state["episodes"]]
        runner._cached_to_module = state["cached_to_module"]
        runner._needs_reset = False
    else:  # nothing ongoing saved (or ASYNC envs): the next sample() starts fresh episodes
        runner._needs_reset = True


def _space_rng(space):
    rng = getattr(space, "_np_random", None)
    return rng.bit_generator.state if rng is not None else None
