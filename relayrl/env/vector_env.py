"""Building the gymnasium vector env an EnvRunner steps, and reading per-env infos from it."""
from collections.abc import Mapping
from typing import Any, Callable, List, Optional

import cloudpickle
import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from relayrl.env.env_checks import install_first_call_checks
from relayrl.env.env_context import EnvContext
from relayrl.env.episode_limits import user_env
from relayrl.env.sub_env_errors import note_env_creation, raise_the_sub_env_error


class ApplyFuncWrapper(gym.Wrapper):
    """Lets `foreach_env` run a function on a sub-env living in an async worker process."""

    def relayrl_apply(self, func_bytes: bytes):
        return cloudpickle.loads(func_bytes)(user_env(self.env))


def vectorize_mode_name(mode) -> str:
    """gym_env_vectorize_mode as an upper-case name ("SYNC", "ASYNC", "VECTOR_ENTRY_POINT"), whether given as
    a string in any case or as gymnasium's VectorizeMode enum."""
    return str(getattr(mode, "value", mode)).upper()


def make_vector_env(creator: Callable, env_config: dict, *, num_envs: int, worker_index: int, num_workers: int,
                    mode: str, check_env: bool = True, wrap: Optional[Callable[[gym.Env], gym.Env]] = None,
                    record_video=None, env_label: str = "") -> gym.vector.VectorEnv:
    """A Sync/Async vector env whose sub-envs each get their own EnvContext (vector_index=i).

    SAME_STEP autoreset: a finished sub-env is reset inside the same step() and its final
    observation comes back in infos["final_obs"], so no step is wasted on resets.
    `check_env`: each sub-env's first reset() and step() results are checked (env/env_checks.py).
    `wrap`: applied to each sub-env after the checks (env/episode_limits.py).
    `record_video`: None, or (vector_index -> wrapper or None) for the sub-env that records videos (outermost).
    `env_label`: the env as an error in its creator names it (sub_env_errors.py).
    """
    is_async = vectorize_mode_name(mode) == "ASYNC"

    def env_fn(i: int):
        def make():
            wrap_for_video = record_video(i) if record_video else None
            config = {**env_config, "render_mode": "rgb_array"} if wrap_for_video else env_config
            try:
                env = creator(EnvContext(config, worker_index, i, num_workers))
            except Exception as error:
                note_env_creation(error, env_label, f"sub-env {i} of EnvRunner worker_index={worker_index}", config)
                raise
            if not isinstance(env, gym.Env):
                raise TypeError(f"The env creator returned {type(env).__name__}, not a gymnasium.Env.")
            refuse_multi_agent_env(env)
            if check_env:
                install_first_call_checks(env, where=f"sub-env {i} of EnvRunner worker_index={worker_index}")
            if wrap is not None:
                env = wrap(env)
            if wrap_for_video:
                env = wrap_for_video(env)
            return ApplyFuncWrapper(env) if is_async else env
        return make

    fns = [env_fn(i) for i in range(num_envs)]
    if is_async:
        try:
            return gym.vector.AsyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
        except (OSError, EOFError) as broken_pipe:  # a worker died making its sub-env (sub_env_errors.py)
            raise_the_sub_env_error(fns[1:], broken_pipe)
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)


def refuse_multi_agent_env(env) -> None:
    """A MultiAgentEnv in a single-agent runner: gymnasium would fail on its missing `action_space` with an
    AttributeError that names neither the cause nor the fix."""
    from relayrl.env.multi_agent_env import is_multi_agent_env

    if is_multi_agent_env(env):
        env.close()
        raise ValueError(
            f"The env {type(env).__name__} is a MultiAgentEnv, but this config is single-agent: add "
            "config.multi_agent(policies={'main'}, policy_mapping_fn=lambda agent_id, episode, **kw: 'main') "
            "(one module for all agents; or one policy per agent), or give a single-agent gymnasium.Env.")


def foreach_sub_env(vector_env: gym.vector.VectorEnv, func: Callable) -> List:
    """`func(sub_env)` for every sub-env, in-process for sync envs and in the workers for async ones."""
    if isinstance(vector_env, gym.vector.AsyncVectorEnv):
        return list(vector_env.call("relayrl_apply", cloudpickle.dumps(func)))
    if not hasattr(vector_env, "envs"):
        raise ValueError(f"foreach_env needs sub-env objects, but {type(vector_env).__name__} (an env's own vector "
                         "implementation, gym_env_vectorize_mode='VECTOR_ENTRY_POINT', picked for an ALE/... run that "
                         "leaves the mode unset) steps all sub-envs as one; set "
                         "config.env_runners(gym_env_vectorize_mode='SYNC') to call functions on each sub-env.")
    return [func(user_env(env)) for env in vector_env.envs]


def unbatch(space: gym.Space, batched):
    """Per-sub-env items of a batched value: the array itself for array spaces (indexable), else a list."""
    if isinstance(batched, np.ndarray):
        return batched
    return list(gym.vector.utils.iterate(space, batched))


_ARRAY_SPACES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)


def batch_actions(single_space: gym.Space, actions) -> Any:
    """Stack per-sub-env actions into what the vector env's step() expects (nested spaces included)."""
    if isinstance(single_space, _ARRAY_SPACES):
        return actions if isinstance(actions, np.ndarray) else np.stack(actions)
    out = gym.vector.utils.create_empty_array(single_space, n=len(actions))
    return gym.vector.utils.concatenate(single_space, actions, out)


def in_space_dtype(space: gym.Space, obs):
    """An observation as the env returned it (a final observation, `infos["final_obs"][i]`: the vector env casts
    only the batched ones) in the batched observations' form: for an array space, the space's dtype (an env may
    return float64 arrays, lists or ints for a float32 Box), so an episode's observations have one dtype; for a
    Dict or Tuple space, each part so (`_in_nested_space_dtypes`)."""
    if isinstance(space, _ARRAY_SPACES):  # (first: the common case pays one isinstance and one dtype compare)
        if type(obs) is np.ndarray and obs.dtype == space.dtype:
            return obs
        if isinstance(space, gym.spaces.Discrete):
            return space.dtype.type(obs)  # as an item of the batched column: a numpy scalar
        return np.asarray(obs, dtype=space.dtype)
    return _in_nested_space_dtypes(space, obs)


def _in_nested_space_dtypes(space: gym.Space, obs):
    """`in_space_dtype` of each part of a Dict (a dict of the space's keys, in its order) or Tuple (a tuple)
    observation, as gymnasium's `iterate` gives the batched ones. Other spaces, or a value without the space's
    structure (left for the env checks to name), as they are. (Its own function: the comprehensions' closure
    would cost in_space_dtype's fast path a cell.)"""
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(obs, Mapping) or any(key not in obs for key in space.spaces):
            return obs
        return {key: in_space_dtype(part, obs[key]) for key, part in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(obs, (tuple, list)) or len(obs) != len(space.spaces):
            return obs
        return tuple(in_space_dtype(part, value) for part, value in zip(space.spaces, obs))
    return obs


_FINAL_KEYS = ("final_obs", "_final_obs", "final_info", "_final_info")


def info_at(infos: dict, i: int) -> dict:
    """The info dict of sub-env i out of gymnasium's batched info dict."""
    if not infos:
        return {}
    out = {}
    for key, value in infos.items():
        if key.startswith("_") or key in _FINAL_KEYS:
            continue
        mask = infos.get("_" + key)
        if mask is None or mask[i]:
            out[key] = info_at(value, i) if isinstance(value, dict) else value[i]
    return out


def has_env_infos(infos: dict) -> bool:
    """Whether gymnasium's batched info dict holds any sub-env's info (not only autoreset keys)."""
    return not all(key.startswith("_") or key in _FINAL_KEYS for key in infos)


def infos_per_env(infos: dict, n: int) -> List[dict]:
    """`info_at(infos, i)` for every sub-env; no per-env work when infos hold only autoreset keys."""
    if not has_env_infos(infos):
        return [{} for _ in range(n)]
    return [info_at(infos, i) for i in range(n)]
