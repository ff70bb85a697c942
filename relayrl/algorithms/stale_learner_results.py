"""Learner stats only for the modules that train: a module the run no longer trains reports none.

The algorithm's MetricsLogger keeps each Learner stat until it is logged again (window=1), so a module that trained
once (in this run, or in the run a checkpoint restores) and is frozen now (fewer `policies_to_train`, a restored
run's changed config, a removed module) kept reporting its last losses under `result["learners"][module_id]` every
iteration. A module that was never trained reports none (the Learner updates only the trained modules); RLlib's
results have no untrained module's learner stats either. So, before each result, the stats of modules that the
config does not train are dropped.

A callable policies_to_train decides per batch (`fn(module_id, batch)`), so it cannot say here which modules
trained: there only modules that no longer exist are dropped.
"""
from relayrl.algorithms.multi_agent_mapping import trains_module
from relayrl.core.columns import ALL_MODULES
from relayrl.metrics import LEARNER_RESULTS


def drop_untrained_modules_results(metrics, config) -> None:
    """Delete `metrics`' `learners/<module_id>` stats of the modules `config` does not train."""
    results = metrics.peek(LEARNER_RESULTS, default=None)
    if not isinstance(results, dict):
        return
    to_train = config.policies_to_train
    modules = set(config.policies) if config.is_multi_agent and isinstance(config.policies, dict) else None
    for module_id in [key for key in results if key != ALL_MODULES]:
        gone = modules is not None and module_id not in modules
        frozen = not callable(to_train) and not trains_module(to_train, module_id)
        if gone or frozen:
            metrics.delete(LEARNER_RESULTS, module_id, key_error=False)
