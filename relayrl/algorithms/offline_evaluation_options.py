"""`config.evaluation(offline_evaluation_interval=N, ...)`: RLlib 2.60's offline evaluation options (the Learner's
loss on held-out data, no env; relayrl/offline/offline_evaluation.py, docs/offline.md#offline-evaluation).

num_offline_eval_runners=0 (RLlib's default) evaluates in the algorithm's process with a copy of the Learner synced
before each evaluation; n > 0 runs n Ray actors (relayrl/distributed/offline_eval_actors.py). Their fault-tolerance
options are accepted at their defaults only (RLlib code that sets them to their defaults ports unchanged).
"""
from relayrl.algorithms.options import (
    CALLABLE_OR_NONE,
    DICT,
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    Option,
    one_of,
    only_default,
    optional,
)

_NOT_BUILT = "relayrl's remote offline evaluation runners have no such setting yet"


def _remote_only(name: str, default, what: str) -> Option:
    return Option(name, default, f"{what} of the remote offline evaluation runners; relayrl's have none yet (a "
                  f"failed runner fails the evaluation), so only the default ({default!r}).", "evaluation",
                  only_default(default, _NOT_BUILT), cli=False)


OFFLINE_EVALUATION_OPTIONS = (
    Option("offline_evaluation_interval", None, "Compute the Learner's loss (no gradient step) on offline data "
           "every this many train() calls: evaluation_config's input_ (held-out data), else the training input; "
           "reported under `result['evaluation']['offline_eval_runners']`. None or 0: never.", "evaluation",
           optional(NON_NEGATIVE_INT)),
    Option("num_offline_eval_runners", 0, "Remote offline evaluation runners (Ray actors), each evaluating "
           "dataset_num_iters_per_offline_eval_runner batches of its share of the evaluation files; 0: in the "
           "algorithm's process.", "evaluation", NON_NEGATIVE_INT),
    Option("offline_evaluation_type", "eval_loss", "'eval_loss': the Learner's loss on the evaluation data; 'is' / "
           "'pdis': the module's episode return estimated by (per-decision) importance sampling from logged "
           "episodes with the behaviour policy's `action_logp` (relayrl/offline/importance_sampling.py).",
           "evaluation", one_of("eval_loss", "is", "pdis")),
    Option("offline_eval_runner_class", None, "RLlib's OfflineEvaluationRunner subclass; relayrl customises the "
           "evaluation through offline_loss_for_module_fn (only None).", "evaluation",
           only_default(None, "pass offline_loss_for_module_fn to change the evaluated loss"), cli=False),
    Option("offline_loss_for_module_fn", None, "fn(learner, *, module_id, config, batch, fwd_out) -> loss tensor "
           "evaluated instead of the Learner's compute_loss_for_module (the learner is the evaluation's copy).",
           "evaluation", CALLABLE_OR_NONE, cli=False),
    Option("offline_eval_batch_size_per_runner", 256, "Timesteps per evaluation batch.", "evaluation", POSITIVE_INT),
    Option("dataset_num_iters_per_offline_eval_runner", 1, "Batches per offline evaluation (the reported loss is "
           "their mean); the evaluation reader streams on, so each evaluation sees the next batches.",
           "evaluation", POSITIVE_INT),
    Option("offline_evaluation_duration", 1, "RLlib's multiplier of the batches per evaluation for remote runners; "
           "relayrl's runners each run dataset_num_iters_per_offline_eval_runner batches (only 1).", "evaluation",
           only_default(1, "set dataset_num_iters_per_offline_eval_runner instead")),
    Option("offline_evaluation_parallel_to_training", False, "Offline evaluation beside the training step (only "
           "False: it runs after the step).", "evaluation",
           only_default(False, "the offline evaluation runs after the training step")),
    Option("offline_eval_rl_module_inference_only", False, "Evaluate an inference-only module (only False: the "
           "loss needs the Learner's full module).", "evaluation",
           only_default(False, "the loss needs the full module (critics, targets)")),
    Option("offline_evaluation_timeout_s", 120.0, "Seconds a remote runner's evaluation may take; the embedded "
           "evaluation is not interrupted.", "evaluation", POSITIVE_FLOAT),
    Option("num_cpus_per_offline_eval_runner", 1, "CPUs per remote offline evaluation runner.", "evaluation",
           NON_NEGATIVE_FLOAT),
    Option("num_gpus_per_offline_eval_runner", 0, "GPUs per remote offline evaluation runner (fractions allowed).",
           "evaluation", NON_NEGATIVE_FLOAT),
    Option("custom_resources_per_offline_eval_runner", {}, "Custom Ray resources per remote offline evaluation "
           "runner.", "evaluation", DICT),
    _remote_only("max_requests_in_flight_per_offline_eval_runner", 1, "Requests in flight"),
    _remote_only("broadcast_offline_eval_runner_states", False, "State broadcast"),
    _remote_only("validate_offline_eval_runners_after_construction", True, "Health check at construction"),
    _remote_only("restart_failed_offline_eval_runners", True, "Restarts"),
    _remote_only("ignore_offline_eval_runner_failures", False, "Failure tolerance"),
    _remote_only("max_num_offline_eval_runner_restarts", 1000, "Restart limit"),
    Option("offline_eval_runner_health_probe_timeout_s", 30.0, "Seconds a remote runner's health probe may take "
           "(no effect yet: relayrl's remote runners are not probed).", "evaluation", NON_NEGATIVE_FLOAT),
    Option("offline_eval_runner_restore_timeout_s", 1800.0, "Seconds to restore a recreated remote runner's state "
           "(no effect yet: relayrl's remote runners are not recreated).", "evaluation", NON_NEGATIVE_FLOAT),
)


def check_offline_evaluation_values(config, name: str) -> None:
    """Combinations a single option's check cannot see: offline evaluation needs an offline algorithm."""
    if config.offline_evaluation_interval and not config.READS_OFFLINE_DATA:
        raise ValueError(f"{name} does not train from offline data, so it has no offline evaluation "
                         f"(offline_evaluation_interval={config.offline_evaluation_interval}): use BC, MARWIL, CQL "
                         "or IQL, or evaluate in an env with config.evaluation(evaluation_interval=N).")


__all__ = ["OFFLINE_EVALUATION_OPTIONS", "check_offline_evaluation_values"]
