"""`gym_env_vectorize_mode="VECTOR_ENTRY_POINT"`: the env's own vectorised implementation.

gymnasium ids may register a `vector_entry_point`: one object that steps all sub-envs at once in
numpy (CartPole's `CartPoleVectorEnv`), far faster than a SyncVectorEnv of single envs. It has no
sub-env objects, so nothing can be wrapped per sub-env:

- options that wrap each sub-env (`horizon`, `soft_horizon`, `no_done_at_end`,
  `record_video_every_n_episodes`) raise a ValueError naming the option and the fix;
- `foreach_env` has no sub-envs to visit (vector_env.foreach_sub_env raises);
- the per-sub-env API checks (env_checks.py) are skipped: gymnasium ships these envs.

Runner-level features (reward clipping, episode stats, connectors, callbacks) work as with SYNC. Such
envs usually auto-reset on the NEXT step (CartPole's does; gymnasium 1.4 lets no `vector_kwargs`
choose another mode for them): the runner then records with NextStepRecorder (sampling/).

`ALE/...` ids get ale-py's `AtariVectorEnv` (C++ threads, the preprocessing done by ale-py; see
atari_vector_env.py). An env that has no vector entry point (a registered creator, a class, an id without
one) falls back to SYNC with a warning, so a config written for RLlib runs everywhere.
"""
import logging
from typing import Optional

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from relayrl.env.atari_vector_env import make_atari_vector_env, why_no_atari_vector_env
from relayrl.env.registry import EnvDependencyMissing, gym_env_id, is_registered_env, resolve_env_spec
from relayrl.env.vector_env import vectorize_mode_name
from relayrl.env.wrappers.atari_wrappers import is_atari_id

logger = logging.getLogger("relayrl")

VECTOR_ENTRY_POINT = "VECTOR_ENTRY_POINT"

# Options that need a wrapper around each sub-env, and how to turn each off.
_PER_SUB_ENV_OPTIONS = (
    ("horizon", lambda c: c.horizon is not None, "horizon=None"),
    ("soft_horizon", lambda c: bool(c.soft_horizon), "soft_horizon=False"),
    ("no_done_at_end", lambda c: bool(c.no_done_at_end), "no_done_at_end=False"),
    ("record_video_every_n_episodes", lambda c: bool(c.record_video_every_n_episodes) and not c.in_evaluation,
     "record_video_every_n_episodes=None"),
)


def wants_native(config) -> bool:
    mode = config.gym_env_vectorize_mode
    return vectorize_mode_name(mode) == VECTOR_ENTRY_POINT


def native_env_id(env_spec, env_config=None) -> Optional[str]:
    """The gymnasium id whose own vector env relayrl can use, or None (why not: `why_not_native`)."""
    env_spec = gym_env_id(resolve_env_spec(env_spec))
    if is_atari_id(env_spec):
        return env_spec if why_no_atari_vector_env(dict(env_config or {})) is None else None
    if not isinstance(env_spec, str) or not is_registered_env(env_spec):
        return None
    spec = gym.registry.get(env_spec)
    if spec is None or spec.vector_entry_point is None or spec.additional_wrappers:
        return None
    return env_spec


def why_not_native(env_spec, env_config=None) -> str:
    env_spec = gym_env_id(env_spec)
    if is_atari_id(env_spec):
        return why_no_atari_vector_env(dict(env_config or {}))
    if isinstance(env_spec, str) and env_spec in gym.registry:
        return f"the gymnasium id {env_spec!r} registers no vector_entry_point"
    return f"the env {env_spec!r} is not a gymnasium id with a vector_entry_point"


def per_sub_env_options(config) -> list:
    """(option name, how to turn it off) for each option set in `config` that wraps each sub-env."""
    return [(name, fix) for name, is_set, fix in _PER_SUB_ENV_OPTIONS if is_set(config)]


def check_native_options(config) -> None:
    """Raise a ValueError for options the native vector env cannot honour."""
    conflicts = per_sub_env_options(config)
    if conflicts:
        name, fix = conflicts[0]
        raise ValueError(
            f"{name}={getattr(config, name)!r} needs a wrapper around each sub-env, which "
            f"gym_env_vectorize_mode='VECTOR_ENTRY_POINT' (the env's own vector implementation) does not "
            f"have. Use gym_env_vectorize_mode='SYNC' (or 'ASYNC'), or set {fix}.")


def make_native_vector_env(config, *, num_envs: int, worker_index: int = 0) -> Optional[gym.vector.VectorEnv]:
    """The env's own vector env when the config asks for it and the env has one; None: build SYNC/ASYNC.

    `env_config` goes to the vector env's constructor as keyword arguments (as with gym.make).
    """
    if not wants_native(config):
        return None
    check_native_options(config)
    env_id = native_env_id(config.env, config.env_config)
    if env_id is None:
        if worker_index <= 1:  # one warning per run: the local runner and the first remote one
            logger.warning("gym_env_vectorize_mode='VECTOR_ENTRY_POINT': %s; using SYNC vector envs instead.",
                           why_not_native(config.env, config.env_config))
        return None
    if is_atari_id(env_id):
        return make_atari_vector_env(env_id, dict(config.env_config), num_envs)
    try:
        env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                           **dict(config.env_config))
    except gym.error.DependencyNotInstalled as err:
        raise EnvDependencyMissing(f"The env {env_id!r} needs a package that is not installed: {err}") from None
    except TypeError as err:  # e.g. an env_config key the vector env's constructor does not take
        raise TypeError(f"gym.make_vec({env_id!r}, vectorization_mode='vector_entry_point', **env_config) "
                        f"failed: {err}. Check env_config={dict(config.env_config)!r}, or use "
                        "gym_env_vectorize_mode='SYNC'.") from None
    if autoreset_mode(env) == AutoresetMode.DISABLED:
        env.close()
        raise ValueError(f"The vector env of {env_id!r} does not auto-reset (AutoresetMode.DISABLED), which the "
                         "EnvRunner needs; use gym_env_vectorize_mode='SYNC'.")
    return env


def autoreset_mode(env: gym.vector.VectorEnv) -> AutoresetMode:
    """The vector env's autoreset mode (gymnasium's default, NEXT_STEP, where it declares none)."""
    mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return AutoresetMode(mode) if isinstance(mode, str) else mode
