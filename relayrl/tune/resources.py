"""Resources of one Tune trial of a relayrl algorithm, as placement-group bundles (no ray import)."""
from typing import Any, Dict, List

from relayrl.tune.trainable_base import split_tune_entries


def _as_config(algo_class, config):
    if config is None or isinstance(config, dict):
        clean, _ = split_tune_entries(dict(config or {}))
        return algo_class.get_default_config().update_from_dict(clean)
    return config


def _number(config, key: str, default: float) -> float:
    value = config.get(key, default)
    return default if value in (None, "auto") else value


def resource_bundles(algo_class, config) -> List[Dict[str, Any]]:
    """[the algorithm's own process (1 CPU, or num_cpus_per_learner when it also trains), one bundle
    per remote EnvRunner, one per remote evaluation EnvRunner (with evaluation on), one per remote Learner]."""
    config = _as_config(algo_class, config)
    num_learners = int(config.get("num_learners", 0) or 0)
    # Without remote Learners the algorithm's process trains, with num_cpus_per_learner threads.
    driver_cpus = _number(config, "num_cpus_per_learner", 1) if num_learners == 0 else 1
    bundles: List[Dict[str, Any]] = [{"CPU": driver_cpus}]
    if num_learners == 0 and _number(config, "num_gpus_per_learner", 0):  # the Learner in this process on a GPU
        bundles[0]["GPU"] = _number(config, "num_gpus_per_learner", 0)
    runner = {"CPU": _number(config, "num_cpus_per_env_runner", 1)}
    gpus = _number(config, "num_gpus_per_env_runner", 0)
    if gpus:
        runner["GPU"] = gpus
    runner.update(config.get("custom_resources_per_env_runner", None) or {})
    bundles += [dict(runner) for _ in range(int(config.get("num_env_runners", 0) or 0))]
    if config.get("evaluation_interval", None):  # evaluation actors live in the trial's placement group too
        bundles += [dict(runner) for _ in range(int(config.get("evaluation_num_env_runners", 0) or 0))]
    learner = {"CPU": _number(config, "num_cpus_per_learner", 1)}
    gpus = _number(config, "num_gpus_per_learner", 0)
    if gpus:
        learner["GPU"] = gpus
    bundles += [dict(learner) for _ in range(num_learners)]
    return bundles
