"""`relayrl train` samples with the env's own vector env where that is safe, and says so.

The Python API keeps RLlib's default, SYNC (one gymnasium env per sub-env): user code may call
`foreach_env`, wrap or restart sub-envs, or count on the episodes a seed gave before, and the config
does not show it. A `relayrl train` run is built from flags alone (no callbacks, no user code that
reaches the envs), so the CLI can tell when the env's own vector env (gym_env_vectorize_mode=
"VECTOR_ENTRY_POINT": gymnasium's CartPole vector env, ale-py's AtariVectorEnv) changes nothing but
the speed. It switches when:

- the command line does not name a gym_env_vectorize_mode (a given mode is always kept);
- the run is single-agent and each runner steps at least 2 envs (one env gains nothing);
- the env id has a vector entry point relayrl can use with this env_config (native_env_id);
- no option of the run or its evaluation wraps each sub-env (horizon, videos, ...), and failed sub-envs
  are not restarted one by one (restart_failed_sub_environments);
- for `ALE/...` ids, the runners sample in this process (ale-py starts a thread per core in each
  runner, too many with several runners).

Measured on 2 cores (docs/vector_envs.md): PPO CartPole to 450 with the defaults 1.02-1.05x the env
steps/s, docs/command_line.md's command with RLlib's tuned settings 1.26x, PPO Pong 1.08x. A seeded run's episodes differ from SYNC's (one reset generator for
all sub-envs); `--gym-env-vectorize-mode SYNC` gives the API's behaviour back.
"""
from typing import Optional

OPTION = "gym_env_vectorize_mode"
# What `relayrl train --help` shows as the option's default (the API's is SYNC).
HELP_DEFAULT = "'SYNC', or 'VECTOR_ENTRY_POINT' where the env has one and nothing in the run needs SYNC"


def pick_vector_mode(config, given: dict) -> Optional[str]:
    """Switch `config` to VECTOR_ENTRY_POINT where safe; the line that says so, or None (unchanged).

    `given`: the options named on the command line.
    """
    from relayrl.env.native_vector_env import VECTOR_ENTRY_POINT, native_env_id, per_sub_env_options
    from relayrl.env.vector_env import vectorize_mode_name
    from relayrl.env.wrappers.atari_wrappers import is_atari_id

    if OPTION in given or vectorize_mode_name(config.gym_env_vectorize_mode) != "SYNC":
        return None
    if config.is_multi_agent or config.num_envs_per_env_runner < 2 or config.restart_failed_sub_environments:
        return None
    env_id = native_env_id(config.env, config.env_config)
    if env_id is None or (is_atari_id(env_id) and config.num_env_runners > 0):
        return None
    if per_sub_env_options(config) or per_sub_env_options(config.get_evaluation_config_object()):
        return None
    config.env_runners(gym_env_vectorize_mode=VECTOR_ENTRY_POINT)
    return (f"sampling with {env_id}'s own vector env (gym_env_vectorize_mode={VECTOR_ENTRY_POINT}, picked: "
            f"faster, and safe for this run; --gym-env-vectorize-mode SYNC keeps SYNC)")
