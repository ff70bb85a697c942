"""Names of the parts of a checkpoint (RLlib's `COMPONENT_*` constants), for `get_state(components=...)` and
`restore_from_path(path, component=...)`, e.g. f"{COMPONENT_LEARNER_GROUP}/{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}".
"""
COMPONENT_ENV_RUNNER = "env_runner"
COMPONENT_EVAL_ENV_RUNNER = "eval_env_runners"  # relayrl's name (RLlib: "eval_env_runner")
COMPONENT_ENV_TO_MODULE_CONNECTOR = "env_to_module_connector"
COMPONENT_MODULE_TO_ENV_CONNECTOR = "module_to_env_connector"
COMPONENT_LEARNER_GROUP = "learner_group"
COMPONENT_LEARNER = "learner"
COMPONENT_RL_MODULE = "rl_module"
COMPONENT_OPTIMIZER = "optimizer"
COMPONENT_METRICS_LOGGER = "metrics_logger"

__all__ = [name for name in dir() if name.startswith("COMPONENT_")]
