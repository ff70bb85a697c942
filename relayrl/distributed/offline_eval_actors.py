"""Remote offline evaluation runners (`config.evaluation(num_offline_eval_runners=n)`, n > 0): n Ray actors, each
an OfflineEvaluationRunner (relayrl/offline/offline_evaluation.py) over its share of the evaluation files.

Before each evaluation the training Learner's state (weights, per-module state; no optimizer) goes once into
Ray's object store and every actor loads it; then all evaluate at the same time and the driver sums their
tallies into RLlib's metrics. A runner that fails, or passes offline_evaluation_timeout_s, fails the evaluation
(no restarts yet).
"""
from typing import Any, Dict, List, MutableMapping

from relayrl.offline.offline_evaluation import OfflineEvaluationRunner, evaluation_data_config, learner_state, report


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
        ray = ensure_ray_initialized()
        actor_class = ray.remote(OfflineEvaluationRunner).options(
            num_cpus=config.num_cpus_per_offline_eval_runner, num_gpus=config.num_gpus_per_offline_eval_runner,
            resources=dict(config.custom_resources_per_offline_eval_runner) or None)
        self.actors = []
        for share in split_files(files, n):
            share_config = config.copy(copy_frozen=False)
            overrides = {k: v for k, v in (config.evaluation_config or {}).items() if k not in ("input", "input_")}
            overrides["input_"] = share
            share_config.evaluation(evaluation_config=overrides)
            self.actors.append(actor_class.remote(share_config, spaces, module_spec))
        self.timeout_s = config.offline_evaluation_timeout_s

    def run(self, learner_group, lifetime: MutableMapping[str, int]) -> Dict[str, Any]:
        import ray

        state = ray.put(learner_state(learner_group))
        self._get([actor.set_learner_state.remote(state) for actor in self.actors], "loading the Learner's state")
        tallies = self._get([actor.evaluate.remote() for actor in self.actors], "evaluating")
        return report(tallies, lifetime)

    def _get(self, refs, doing: str) -> list:
        import ray

        try:
            return ray.get(refs, timeout=self.timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise TimeoutError(f"a remote offline evaluation runner took over offline_evaluation_timeout_s="
                               f"{self.timeout_s} s {doing}; raise it, or use fewer, larger batches.") from None

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


__all__ = ["RemoteOfflineEvaluationRunners", "split_files"]
