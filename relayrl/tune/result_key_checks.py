"""Tune stop criteria and scheduler / search metrics that no relayrl result will have fail at the first result.

Tune only warns once about a stop criterion missing from the results and then trains until another criterion
ends the run; a PBT metric missing from them fails with a message that does not say what the key is called now.
Old RLlib scripts name the old API stack's keys (`stop={"episode_reward_mean": 200}`,
`PopulationBasedTraining(metric="episode_reward_mean")`): `install()` (called when ray.tune loads, see
trainable_base.py) makes Tune raise at the first result, naming today's key and
`config.reporting(legacy_result_keys=True)`. Only relayrl's results are judged
(relayrl/metrics/legacy_result_keys.py says which keys).
"""
from relayrl.metrics.legacy_result_keys import missing_result_key_message

_MARK = "_relayrl_result_key_check"


def _check(keys, flat_result, what: str) -> None:
    for key in keys:
        message = missing_result_key_message(key, flat_result, what=what) if isinstance(key, str) else None
        if message is not None:
            raise ValueError(message)


def install() -> None:
    """Wrap Tune's Trial.should_stop and TuneController._validate_result_metrics (once)."""
    from ray.tune.experiment.trial import Trial

    if not getattr(Trial.should_stop, _MARK, False):
        original_should_stop = Trial.should_stop

        def should_stop(self, result):
            _check(self.stopping_criterion, result, "The Tune stop criterion")
            return original_should_stop(self, result)

        setattr(should_stop, _MARK, True)
        Trial.should_stop = should_stop

    try:  # a private method of Tune's controller (Ray 2.x); without it Tune's own check still runs
        from ray.tune.execution.tune_controller import TuneController
    except ImportError:
        return
    original_validate = getattr(TuneController, "_validate_result_metrics", None)
    if original_validate is None or getattr(original_validate, _MARK, False):
        return

    def _validate_result_metrics(self, result):
        for where, owner in (("tune.TuneConfig(metric=...)", self), ("the scheduler's metric", self._scheduler_alg),
                             ("the search algorithm's metric", self._search_alg)):
            metric = getattr(owner, "_metric", None) if owner is self else getattr(owner, "metric", None)
            _check(metric if isinstance(metric, (list, tuple)) else [metric], result, f"The Tune metric ({where})")
        return original_validate(self, result)

    setattr(_validate_result_metrics, _MARK, True)
    TuneController._validate_result_metrics = _validate_result_metrics
