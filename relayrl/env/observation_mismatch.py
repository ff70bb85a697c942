"""Naming the env, the space and the value when a vector env cannot batch an observation.

Each sub-env's first reset() and step() are checked (env_checks.py); an env whose observations change
shape later (after a few steps, or in a later episode) fails inside gymnasium's vector env with numpy's
"Output array is the wrong shape" (SYNC) or "could not broadcast input array from shape (4,) into shape (3,)"
(ASYNC), which names neither the env nor its observation_space. A runner turns such an error into an
`EnvAPIError` that does (`observation_mismatch`), once, when it is raised: stepping pays nothing for it.
"""
from typing import Optional

import gymnasium as gym

from relayrl.env.env_checks import EnvAPIError, describe_value, env_name, observation_problem

_FIX = "Return observations that fit env.observation_space (or declare the space they have)."


def env_spec_name(env_spec) -> str:
    """config.env as the errors name it: a class or function by its module and name, a string as it is."""
    if isinstance(env_spec, str):
        return repr(env_spec)
    return f"{getattr(env_spec, '__module__', '?')}.{getattr(env_spec, '__qualname__', repr(env_spec))}"


def observation_mismatch(vector_env, error: BaseException, *, env_spec, worker_index: int) -> Optional[EnvAPIError]:
    """An EnvAPIError explaining `error` (raised by `vector_env`'s step() or reset()) when a sub-env's observation
    does not fit the observation space; None when the error is something else."""
    if not isinstance(error, ValueError) or isinstance(error, EnvAPIError) or vector_env is None:
        return None
    space = getattr(vector_env, "single_observation_space", None)
    envs, last_obs = getattr(vector_env, "envs", None), getattr(vector_env, "_env_obs", None)
    if envs is not None and last_obs is not None:  # SyncVectorEnv: each sub-env's latest observation is kept
        for i, obs in enumerate(last_obs):
            problem = None if obs is None else observation_problem(obs, space)
            if problem:
                return EnvAPIError(
                    f"env {env_name(envs[i])} (sub-env {i} of EnvRunner worker_index={worker_index}): step() or "
                    f"reset() returned the observation {describe_value(obs)}, but the observation_space is {space}: "
                    f"{problem}. {_FIX}")
        return None
    if isinstance(vector_env, gym.vector.AsyncVectorEnv) and "broadcast" in str(error):
        return EnvAPIError(
            f"env {env_spec_name(env_spec)} (a sub-env of EnvRunner worker_index={worker_index}, "
            f"gym_env_vectorize_mode='ASYNC'): step() or reset() returned an observation that does not fit the "
            f"observation_space {space}: {error}. {_FIX}")
    return None
