"""Remote offline evaluation runners (`config.evaluation(num_offline_eval_runners=n)`, n > 0): n Ray actors, each
an OfflineEvaluationRunner (relayrl/offline/offline_evaluation.py) over its share of the evaluation files.

Before each evaluation the training Learner's state (weights, per-module state; no optimizer) goes once into
Ray's object store and every actor loads it; then all evaluate at the same time and the driver sums their
tallies into RLlib's metrics.

Failures, per RLlib's fault-tolerance options (config.evaluation(...)):
* A runner whose process died (ray.kill, os._exit, a lost node) or that passes offline_evaluation_timeout_s is
  killed; with restart_failed_offline_eval_runners (the default) a new actor takes its share, loads the state within
  offline_eval_runner_restore_timeout_s and evaluates again, up to max_num_offline_eval_runner_restarts in the run.
  A new runner reads its share from the start.
* An error the evaluation itself raises (bad data: OfflineDataError) would come back after a restart, so it fails
  the evaluation with the runner's message.
* With ignore_offline_eval_runner_failures, a runner that cannot be brought back is left out and the others
  report; without it, the evaluation fails naming the runner and the option.
validate_offline_eval_runners_after_construction probes each new actor within
offline_eval_runner_health_probe_timeout_s.
"""
import logging
from typing import Any, Dict, List, MutableMapping, Optional

from relayrl.offline.offline_evaluation import OfflineEvaluationRunner, evaluation_data_config, learner_state, report

logger = logging.getLogger("relayrl")


class OfflineEvalRunnerFailedError(RuntimeError):
    """A remote offline evaluation runner failed and could not be restarted or left out."""


def split_files(files: List[str], n: int) -> List[List[str]]:
    """Round-robin shares of the evaluation files, one per runner."""
    return [files[i::n] for i in range(n)]


class RemoteOfflineEvaluationRunners:
    """n OfflineEvaluationRunner actors with disjoint shares of the evaluation input's files."""

    def __init__(self, config, spaces, module_spec):
        from relayrl.distributed.ray_setup import ensure_ray_initialized
        from relayrl.offline.files import input_files
        from relayrl.offline.minari_bridge import minari_dataset_ids

        eval_config = evaluation_data_config(config)
        n = config.num_offline_eval_runners
        if minari_dataset_ids(eval_config.input_):
            raise ValueError("remote offline evaluation runners split parquet files; a Minari dataset is evaluated "
                             "in this process: set num_offline_eval_runners=0.")
        _, files = input_files(eval_config.input_, filesystem=eval_config.input_filesystem,
                               filesystem_kwargs=eval_config.input_filesystem_kwargs)
        if len(files) < n:
            raise ValueError(f"num_offline_eval_runners={n} splits the evaluation input by file, but it has "
                             f"{len(files)} file(s): use at most {len(files)} runner(s), or 0 (embedded).")
        self.ray = ensure_ray_initialized()
        self.config = config
        self._actor_class = self.ray.remote(OfflineEvaluationRunner).options(
            num_cpus=config.num_cpus_per_offline_eval_runner, num_gpus=config.num_gpus_per_offline_eval_runner,
            resources=dict(config.custom_resources_per_offline_eval_runner) or None)
        self._build_args = [(self._share_config(config, share), spaces, module_spec) for share in split_files(files, n)]
        self.actors: Dict[int, Any] = {i: self._actor_class.remote(*args) for i, args in enumerate(self._build_args)}
        self.num_restarts = 0
        if config.validate_offline_eval_runners_after_construction:
            self._probe(list(self.actors))

    @staticmethod
    def _share_config(config, share: List[str]):
        share_config = config.copy(copy_frozen=False)
        overrides = {k: v for k, v in (config.evaluation_config or {}).items() if k not in ("input", "input_")}
        overrides["input_"] = share
        share_config.evaluation(evaluation_config=overrides)
        return share_config

    def _probe(self, indices: List[int]) -> None:
        """Wait until the actors are built (their __init__ ran); one that is not is a failure at construction."""
        timeout = self.config.offline_eval_runner_health_probe_timeout_s
        for i in indices:
            try:
                self.ray.get(self.actors[i].__ray_ready__.remote(), timeout=timeout)
            except Exception as error:  # noqa: BLE001 - named in the message
                raise OfflineEvalRunnerFailedError(
                    f"remote offline evaluation runner {i} was not built within "
                    f"offline_eval_runner_health_probe_timeout_s={timeout} s: {error}") from error

    # -- one evaluation ------------------------------------------------------------------------------
    def run(self, learner_group, lifetime: MutableMapping[str, int]) -> Dict[str, Any]:
        if not self.actors:
            raise OfflineEvalRunnerFailedError("every remote offline evaluation runner has failed and been left out "
                                               "(ignore_offline_eval_runner_failures=True); none is left to evaluate.")
        state = self.ray.put(learner_state(learner_group))
        refs = {}
        for i, actor in self.actors.items():
            actor.set_learner_state.remote(state)  # the actor runs calls in order: evaluate() sees this state
            refs[actor.evaluate.remote()] = i
        timeout = self.config.offline_evaluation_timeout_s
        ready, not_ready = self.ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        tallies = []
        for ref in ready:
            tally = self._result_or_retry(refs[ref], ref, state)
            if tally is not None:
                tallies.append(tally)
        for ref in not_ready:
            error = TimeoutError(f"no answer within offline_evaluation_timeout_s={timeout} s (raise it, or use fewer, "
                                 "larger batches)")
            tally = self._retry(refs[ref], error, state)
            if tally is not None:
                tallies.append(tally)
        if not tallies:
            raise OfflineEvalRunnerFailedError("no remote offline evaluation runner finished this evaluation.")
        return report(tallies, lifetime)

    def _result_or_retry(self, i: int, ref, state) -> Optional[Dict[str, Any]]:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as error:  # the evaluation raised: a restart would raise again
            raise self._fatal(i, error) from None
        except self.ray.exceptions.RayError as error:  # the actor died or cannot be reached
            return self._retry(i, error, state)

    def _retry(self, i: int, error: Exception, state) -> Optional[Dict[str, Any]]:
        """Restart runner `i` and evaluate again while restarts are allowed and left; its tally, or None when it is
        left out (ignore_offline_eval_runner_failures)."""
        cfg = self.config
        while True:
            self.ray.kill(self.actors[i], no_restart=True)
            if not cfg.restart_failed_offline_eval_runners:
                return self._leave_out(i, error, "Set restart_failed_offline_eval_runners=True to replace it, or")
            if self.num_restarts >= cfg.max_num_offline_eval_runner_restarts:
                limit = cfg.max_num_offline_eval_runner_restarts
                return self._leave_out(i, error, f"The run's max_num_offline_eval_runner_restarts={limit} are used "
                                                 "up: raise it, or")
            self.num_restarts += 1
            logger.warning("remote offline evaluation runner %d failed (%s); restarting it (restart %d).", i, error,
                           self.num_restarts)
            self.actors[i] = self._actor_class.remote(*self._build_args[i])
            try:
                self.ray.get(self.actors[i].set_learner_state.remote(state),
                             timeout=cfg.offline_eval_runner_restore_timeout_s)
                return self.ray.get(self.actors[i].evaluate.remote(), timeout=cfg.offline_evaluation_timeout_s)
            except self.ray.exceptions.RayTaskError as task_error:
                raise self._fatal(i, task_error) from None
            except (self.ray.exceptions.RayError, TimeoutError) as again:
                error = again

    def _leave_out(self, i: int, error: Exception, fix: str) -> None:
        """Leave runner `i` out (ignore_offline_eval_runner_failures), else fail with `fix` (a sentence's start)."""
        if not self.config.ignore_offline_eval_runner_failures:
            raise OfflineEvalRunnerFailedError(
                f"remote offline evaluation runner {i} failed: {str(error).rstrip('.')}. {fix} set "
                "ignore_offline_eval_runner_failures=True to go on without it.") from None
        logger.warning("remote offline evaluation runner %d failed (%s) and is left out "
                       "(ignore_offline_eval_runner_failures=True).", i, error)
        del self.actors[i]
        return None

    @staticmethod
    def _fatal(i: int, error: Exception) -> Exception:
        """The error the runner's evaluation raised (its own type, e.g. OfflineDataError), saying which runner."""
        cause = getattr(error, "cause", None)
        if isinstance(cause, Exception):
            cause.add_note(f"(raised in remote offline evaluation runner {i})")
            return cause
        return OfflineEvalRunnerFailedError(f"remote offline evaluation runner {i} raised: {error}")

    def close(self) -> None:
        for actor in self.actors.values():
            self.ray.kill(actor)
        self.actors = {}


__all__ = ["RemoteOfflineEvaluationRunners", "OfflineEvalRunnerFailedError", "split_files"]
