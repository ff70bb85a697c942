"""The env's own vector env where it has one and nothing in the run needs SYNC's separate envs.

gym_env_vectorize_mode defaults to "SYNC" (RLlib's default: one gymnasium env object per sub-env). Where the env
id registers its own vector implementation (gymnasium's CartPole vector env; ale-py's AtariVectorEnv for `ALE/...`
ids), "VECTOR_ENTRY_POINT" steps all sub-envs at once and is faster (docs/vector_envs.md). It has no sub-env
objects, so it is picked only when:

- the user did not set gym_env_vectorize_mode (a mode they name is always kept);
- the run is single-agent and each runner steps at least 2 envs (one env gains nothing);
- the env id has a vector entry point usable with this env_config (its constructor takes every key);
- no option of the run or of its evaluation wraps each sub-env (horizon, videos, ...), and failed sub-envs are
  not restarted one by one (restart_failed_sub_environments);
- the evaluation runners' env is the same;
- for `ALE/...` ids, the runners sample in the driver (ale-py starts a thread per core in each runner).

What changes with it (docs/vector_envs.md): a seeded run's episodes differ from SYNC's (one reset generator for all
sub-envs), `foreach_env` raises (no sub-envs to visit), and checkpoints do not hold the ongoing episodes (a restored
runner starts new ones). `gym_env_vectorize_mode="SYNC"` keeps SYNC.
"""
import inspect
from typing import Optional

OPTION = "gym_env_vectorize_mode"
# What `relayrl train --help` shows as the option's default (its declared default is SYNC).
HELP_DEFAULT = "'SYNC', or 'VECTOR_ENTRY_POINT' where the env has one and nothing in the run needs SYNC"


def pick_vector_mode(config) -> Optional[str]:
    """Switch `config` to VECTOR_ENTRY_POINT where that is safe; the line that says so, or None (unchanged)."""
    from relayrl.env.native_vector_env import VECTOR_ENTRY_POINT
    from relayrl.env.vector_env import vectorize_mode_name

    if config.is_given(OPTION) or vectorize_mode_name(config.gym_env_vectorize_mode) != "SYNC":
        return None
    if config.is_multi_agent or config.num_envs_per_env_runner < 2 or config.restart_failed_sub_environments:
        return None
    env_id = _usable_native_env_id(config)
    if env_id is None or not _evaluation_allows_it(config, env_id):
        return None
    config._set_options({OPTION: VECTOR_ENTRY_POINT}, given=False)
    return (f"sampling with {env_id}'s own vector env ({OPTION}='{VECTOR_ENTRY_POINT}', picked: faster, and "
            f"nothing in this run needs SYNC's separate envs; set {OPTION}='SYNC' to keep SYNC)")


def _usable_native_env_id(config) -> Optional[str]:
    from relayrl.env.native_vector_env import native_env_id, per_sub_env_options
    from relayrl.env.wrappers.atari_wrappers import is_atari_id

    env_id = native_env_id(config.env, config.env_config)
    if env_id is None or per_sub_env_options(config):
        return None
    if is_atari_id(env_id):
        return env_id if config.num_env_runners == 0 else None
    return env_id if _constructor_takes(env_id, config.env_config) else None


def _constructor_takes(env_id: str, env_config) -> bool:
    """Whether the id's vector env loads (phys2d's need jax) and takes every env_config key as a keyword
    (gym.make_vec passes them on)."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    try:
        parameters = inspect.signature(load_env_creator(gym.registry[env_id].vector_entry_point)).parameters
    except Exception:  # a missing dependency, an entry point that does not import
        return False
    keys = set(dict(env_config or {}))
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return True
    return keys <= set(parameters) - {"num_envs"}


def _evaluation_allows_it(config, env_id: str) -> bool:
    """The evaluation runners inherit the mode: their env must be the same and wrap no sub-env either."""
    if not config.evaluation_interval and not config.evaluation_config:
        return True
    if OPTION in dict(config.evaluation_config or {}):
        return True  # the evaluation names its own mode
    return _usable_native_env_id(config.get_evaluation_config_object()) == env_id
