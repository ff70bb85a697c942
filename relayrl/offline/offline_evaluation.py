"""Offline evaluation (RLlib 2.60's `OfflineEvaluationRunner`, embedded): the Learner's loss on offline data, with
no gradient step and no env (`config.evaluation(offline_evaluation_interval=N)`, docs/offline.md); with
offline_evaluation_type "is" or "pdis", the module's episode return estimated from logged episodes instead
(relayrl/offline/importance_sampling.py).

The runner holds its own copy of the algorithm's Learner, synced before each evaluation (module weights, learner
connector state and per-module state such as MARWIL's advantage norm or CQL's update count; no optimizer): the
loss sees exactly the training Learner's state, and nothing the evaluation does (the loss's logged stats, MARWIL's
moving average) reaches the training Learner. Rows come from evaluation_config's `input_` (held-out data), else
the training input, through the same reader and Learner connector pipeline as training (OfflineData).
"""
from typing import Any, Dict, List, MutableMapping

import numpy as np
import torch

from relayrl.core.columns import ALL_MODULES
from relayrl.learner.loss_mask import num_real_steps
from relayrl.offline.importance_sampling import ESTIMATORS, EpisodeReturns, return_metrics
from relayrl.offline.offline_data import OfflineData

# RLlib's result keys: result["evaluation"]["offline_eval_runners"][module id]["total_eval_loss"], ...
OFFLINE_EVAL_RUNNER_RESULTS = "offline_eval_runners"
TOTAL_EVAL_LOSS_KEY = "total_eval_loss"
DATASET_NUM_ITERS_EVALUATED = "dataset_num_iters_evaluated"
NUM_MODULE_STEPS_SAMPLED = "num_module_steps_sampled"
NUM_ENV_STEPS_SAMPLED = "num_env_steps_sampled"
MODULE_SAMPLE_BATCH_SIZE_MEAN = "module_sample_batch_size_mean"
# Prefix of the algorithm's checkpointed counters that hold the evaluation's lifetime sums.
_COUNTER_PREFIX = "offline_eval/"


class OfflineEvaluationRunner:
    """Evaluates the Learner's loss on `dataset_num_iters_per_offline_eval_runner` batches of
    `offline_eval_batch_size_per_runner` timesteps each."""

    def __init__(self, config, spaces, module_spec):
        eval_config = evaluation_data_config(config)
        eval_config.freeze()
        self.config = eval_config
        self.learner = eval_config.learner_class(config=eval_config, module_spec=module_spec, spaces=spaces)
        self.learner.build()
        self.data = OfflineData(eval_config, spaces["__env_single__"], learner=self.learner)  # the rows' spaces
        self._loss_fn = eval_config.offline_loss_for_module_fn
        self.returns = None  # "is"/"pdis": estimated episode returns instead of the loss
        if eval_config.offline_evaluation_type in ESTIMATORS:
            self.module_id = self.data.rows.prelearner.module_id
            self.returns = EpisodeReturns(eval_config, self.data.reader, self.data.rows,
                                          self.learner.module[self.module_id])

    def set_learner_state(self, state: Dict[str, Any]) -> None:
        self.learner.set_state(state)

    def run(self, learner_group, lifetime: MutableMapping[str, int]) -> Dict[str, Any]:
        """One evaluation with the training Learner's current state; adds its counts to `lifetime` (the
        algorithm's checkpointed counters) and returns RLlib's metrics: {module id: {total_eval_loss, the loss's
        own stats, steps}, __all_modules__: {...}} (remote runners: relayrl/distributed/offline_eval_actors.py)."""
        self.set_learner_state(learner_state(learner_group))
        return report([self.evaluate()], lifetime)

    def evaluate(self) -> Dict[str, Any]:
        """The losses (or estimated returns) and counts of one evaluation, to be summed over runners (`report`)."""
        if self.returns is not None:
            return self._estimate_returns()
        cfg, learner = self.config, self.learner
        num_iters = cfg.dataset_num_iters_per_offline_eval_runner
        loss_sums: Dict[str, float] = {}
        batches: Dict[str, int] = {}
        steps: Dict[str, int] = {}
        env_steps = 0
        with torch.no_grad():
            for _ in range(num_iters):
                batch = learner.build_module_batch(**self.data.sample(cfg.offline_eval_batch_size_per_runner))
                fwd_out = learner.module.forward_train(batch)
                for module_id, module_batch in batch.items():
                    loss = float(self._loss(module_id, module_batch, fwd_out[module_id]))
                    loss_sums[module_id] = loss_sums.get(module_id, 0.0) + loss
                    batches[module_id] = batches.get(module_id, 0) + 1
                    steps[module_id] = steps.get(module_id, 0) + num_real_steps(module_batch)
                env_steps += max((num_real_steps(b) for b in batch.values()), default=0)
        logged = learner.reduce_results()  # what the loss logged during this evaluation (policy_loss, ...)
        stats = {mid: {k: float(v) for k, v in logged.get(mid, {}).items() if not isinstance(v, dict)}
                 for mid in loss_sums}
        return {"loss_sums": loss_sums, "batches": batches, "steps": steps, "env_steps": env_steps,
                "num_iters": num_iters, "stats": stats}

    def _estimate_returns(self) -> Dict[str, Any]:
        num_iters = self.config.dataset_num_iters_per_offline_eval_runner
        returns: List[float] = []
        lengths: List[int] = []
        for _ in range(num_iters):
            more_returns, more_lengths = self.returns.estimate(self.config.offline_eval_batch_size_per_runner)
            returns += more_returns
            lengths += more_lengths
        steps = sum(lengths)
        return {"loss_sums": {}, "batches": {}, "steps": {self.module_id: steps}, "env_steps": steps,
                "num_iters": num_iters, "stats": {}, "returns": {self.module_id: returns},
                "lengths": {self.module_id: lengths}}

    def _loss(self, module_id: str, batch: Dict[str, Any], fwd_out: Dict[str, Any]) -> torch.Tensor:
        learner = self.learner
        if self._loss_fn is not None:
            return self._loss_fn(learner, module_id=module_id, config=learner.config, batch=batch, fwd_out=fwd_out)
        return learner.compute_loss_for_module(module_id=module_id, config=learner.config, batch=batch,
                                               fwd_out=fwd_out)

    def close(self) -> None:
        close = getattr(self.data, "close", None)
        if close is not None:
            close()


def evaluation_data_config(config):
    """The training config with evaluation_config's offline_data options (its `input_`: held-out data) where they
    name files (evaluation_config's other overrides, e.g. input_='sampler', policies or explore, are the env
    evaluation's), and one local Learner whatever trains (the copy joins no DDP group)."""
    from relayrl.algorithms.offline_options import is_offline_input

    held_out = config.get_evaluation_config_object()
    eval_config = config.copy(copy_frozen=False)
    updates = {"num_learners": 0}
    if is_offline_input(held_out.input_):
        updates.update({option.name: getattr(held_out, option.name) for option in type(config).options()
                        if option.group == "offline_data" and option.name != "output"})
    eval_config._set_options(updates, given=False)
    return eval_config


def learner_state(learner_group) -> Dict[str, Any]:
    """What an evaluation Learner takes from the training one: all but the optimizer and metrics."""
    return learner_group.get_state(not_components=["learner/optimizer", "learner/metrics_logger"])["learner"]


def report(tallies: List[Dict[str, Any]], lifetime: MutableMapping[str, int]) -> Dict[str, Any]:
    """RLlib's metrics from the evaluations of one or more runners: per module the mean loss over all their
    batches, the loss's own stats averaged over the runners, the steps summed; `lifetime` gets the counts."""
    results: Dict[str, Any] = {}
    for module_id in sorted({mid for tally in tallies for mid in tally.get("returns", {})}):
        returns = [r for tally in tallies for r in tally["returns"].get(module_id, [])]
        lengths = [n for tally in tallies for n in tally["lengths"].get(module_id, [])]
        results.update(return_metrics(returns, lengths, module_id))
        steps = sum(lengths)
        results[module_id] = {}
        _count(results[module_id], lifetime, f"{module_id}/", NUM_MODULE_STEPS_SAMPLED, steps)
    for module_id in sorted({mid for tally in tallies for mid in tally["loss_sums"]}):
        mine = [tally for tally in tallies if module_id in tally["loss_sums"]]
        num_batches = sum(tally["batches"][module_id] for tally in mine)
        steps = sum(tally["steps"][module_id] for tally in mine)
        stats = [tally["stats"][module_id] for tally in mine]
        keys = {key for one in stats for key in one}
        module_results = {key: float(np.mean([one[key] for one in stats if key in one])) for key in keys}
        module_results[TOTAL_EVAL_LOSS_KEY] = sum(t["loss_sums"][module_id] for t in mine) / num_batches
        module_results[MODULE_SAMPLE_BATCH_SIZE_MEAN] = steps / num_batches
        _count(module_results, lifetime, f"{module_id}/", NUM_MODULE_STEPS_SAMPLED, steps)
        results[module_id] = module_results
    all_modules: Dict[str, Any] = {}
    _count(all_modules, lifetime, "", DATASET_NUM_ITERS_EVALUATED, sum(t["num_iters"] for t in tallies))
    _count(all_modules, lifetime, "", NUM_ENV_STEPS_SAMPLED, sum(t["env_steps"] for t in tallies))
    _count(all_modules, lifetime, "", NUM_MODULE_STEPS_SAMPLED, sum(sum(t["steps"].values()) for t in tallies))
    results[ALL_MODULES] = all_modules
    return results


def _count(results: Dict[str, Any], lifetime: MutableMapping[str, int], scope: str, key: str, value: int) -> None:
    """results[key] = value and results[key + '_lifetime'] = the lifetime sum, kept in `lifetime`."""
    counter = f"{_COUNTER_PREFIX}{scope}{key}_lifetime"
    lifetime[counter] = lifetime.get(counter, 0) + value
    results[key] = value
    results[f"{key}_lifetime"] = lifetime[counter]


__all__ = ["OfflineEvaluationRunner", "evaluation_data_config", "learner_state", "report",
           "OFFLINE_EVAL_RUNNER_RESULTS", "TOTAL_EVAL_LOSS_KEY"]
