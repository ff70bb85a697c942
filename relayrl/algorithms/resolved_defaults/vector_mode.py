"""ale-py's own vector env for `ALE/...` ids where nothing in the run needs SYNC's separate envs.

gym_env_vectorize_mode defaults to "SYNC" (RLlib's default: one gymnasium env object per sub-env). For `ALE/...`
ids, "VECTOR_ENTRY_POINT" steps all sub-envs in ale-py's `AtariVectorEnv` (C++ threads, the preprocessing done by
ale-py), markedly faster on Pong (docs/atari.md). It has no sub-env objects, so it is picked only when:

- the user did not set gym_env_vectorize_mode (a mode they name is always kept);
- the run is single-agent and each runner steps at least 2 envs (one env gains nothing);
- the env is an `ALE/...` id whose env_config ale-py's vector env honours (each key is one of its arguments: SYNC
  passes others, such as render_mode or max_episode_steps, to gym.make);
- no option of the run or of its evaluation wraps each sub-env (horizon, videos, ...), and failed sub-envs are
  not restarted one by one (restart_failed_sub_environments);
- the evaluation runners' env is the same;
- the runners sample in the driver (ale-py starts a thread per core in each runner).

A mode picked for a config stays in its copies (`algo.config.copy()`) without counting as the user's: building such a
copy picks afresh (forget_vector_mode), so one changed so that a condition fails (a horizon, an env_config key, remote
runners, ...) samples with SYNC, as a config that was never built would.

Other envs with a vector entry point (gymnasium's CartPole) keep SYNC unless asked for: with the algorithms'
defaults they gained 2-5% end to end (docs/vector_envs.md), while SYNC keeps what RLlib code and users rely on: a
checkpoint resumes the ongoing episodes bit for bit, a seeded run's episodes are RLlib's, and code may reach the
sub-envs (`env.unwrapped.envs`, `foreach_env`). What changes for Atari (docs/vector_envs.md): a seeded run's
episodes differ from SYNC's and `foreach_env` raises; a checkpoint cannot hold an Atari env's state in either mode.
`gym_env_vectorize_mode="SYNC"` keeps SYNC.
"""
from typing import Optional

OPTION = "gym_env_vectorize_mode"
# What `relayrl train --help` shows as the option's default (its declared default is SYNC).
HELP_DEFAULT = "'SYNC', or 'VECTOR_ENTRY_POINT' for ALE/... ids where nothing in the run needs SYNC"


def pick_vector_mode(config) -> Optional[str]:
    """Switch `config` to VECTOR_ENTRY_POINT where that is safe; the line that says so, or None (unchanged)."""
    from relayrl.env.native_vector_env import VECTOR_ENTRY_POINT
    from relayrl.env.vector_env import vectorize_mode_name

    if config.is_given(OPTION):
        return None
    env_id = None if vectorize_mode_name(config.gym_env_vectorize_mode) != "SYNC" else _safe_atari_id(config)
    if env_id is None:
        return None
    config._set_options({OPTION: VECTOR_ENTRY_POINT}, given=False)
    return (f"sampling with {env_id}'s own vector env ({OPTION}='{VECTOR_ENTRY_POINT}', picked: faster, and "
            f"nothing in this run needs SYNC's separate envs; set {OPTION}='SYNC' to keep SYNC)")


def forget_vector_mode(config) -> None:
    """SYNC again where an earlier build picked the mode (a config copied from a built algorithm; a mode the user
    sets counts as given), so that it is picked afresh for the config as it is now (horizon, env_config, remote
    runners, ... may have changed)."""
    if not config.is_given(OPTION):
        config._set_options({OPTION: type(config)._option_table[OPTION].default}, given=False)


def _safe_atari_id(config) -> Optional[str]:
    """The ALE/... id whose vector env this run may be switched to, or None."""
    if config.is_multi_agent or config.num_envs_per_env_runner < 2 or config.restart_failed_sub_environments:
        return None
    env_id = _usable_atari_id(config)
    return env_id if env_id is not None and _evaluation_allows_it(config, env_id) else None


def _usable_atari_id(config) -> Optional[str]:
    from relayrl.env.atari_vector_env import keys_it_does_not_take
    from relayrl.env.native_vector_env import native_env_id, per_sub_env_options
    from relayrl.env.wrappers.atari_wrappers import is_atari_id

    env_id = native_env_id(config.env, config.env_config)
    if env_id is None or not is_atari_id(env_id) or per_sub_env_options(config):
        return None
    if keys_it_does_not_take(dict(config.env_config or {})):
        return None
    return env_id if config.num_env_runners == 0 else None


def _evaluation_allows_it(config, env_id: str) -> bool:
    """The evaluation runners inherit the mode: their env must be the same and wrap no sub-env either."""
    if not config.evaluation_interval and not config.evaluation_config:
        return True
    if OPTION in dict(config.evaluation_config or {}):
        return True  # the evaluation names its own mode
    return _usable_atari_id(config.get_evaluation_config_object()) == env_id
