"""`config.evaluation(offline_evaluation_interval=N, ...)`: RLlib 2.60's offline evaluation options (the Learner's
loss on held-out data, no env; relayrl/offline/offline_evaluation.py, docs/offline.md#offline-evaluation).

num_offline_eval_runners=0 (RLlib's default) evaluates in the algorithm's process with a copy of the Learner synced
before each evaluation; n > 0 runs n Ray actors (relayrl/distributed/offline_eval_actors.py), restarted or left out
per RLlib's fault-tolerance options.
"""
from relayrl.algorithms.options import (
    BOOL,
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
    return Option(name, default, f"{what} of the remote offline evaluation runners; relayrl's take one request at a "
                  f"time and load the Learner's state before each evaluation, so only the default ({default!r}).",
                  "evaluation", only_default(default, _NOT_BUILT), cli=False)


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
    Option("validate_offline_eval_runners_after_construction", True, "Wait until each remote runner is built "
           "(within offline_eval_runner_health_probe_timeout_s) before the first evaluation.", "evaluation", BOOL),
    Option("restart_failed_offline_eval_runners", True, "Replace a remote runner whose process died or that passed "
           "offline_evaluation_timeout_s, and evaluate its share again (an error its evaluation raises, e.g. bad "
           "data, fails the evaluation: it would come back).", "evaluation", BOOL),
    Option("ignore_offline_eval_runner_failures", False, "Leave a remote runner that cannot be brought back out and "
           "report the others' evaluation; False: the evaluation fails.", "evaluation", BOOL),
    Option("max_num_offline_eval_runner_restarts", 1000, "Restarts of remote offline evaluation runners in the "
           "whole run.", "evaluation", NON_NEGATIVE_INT),
    Option("offline_eval_runner_health_probe_timeout_s", 30.0, "Seconds a new remote runner may take to be built "
           "(validate_offline_eval_runners_after_construction).", "evaluation", NON_NEGATIVE_FLOAT),
    Option("offline_eval_runner_restore_timeout_s", 1800.0, "Seconds a restarted remote runner may take to be "
           "built and load the Learner's state.", "evaluation", NON_NEGATIVE_FLOAT),
)


def check_offline_evaluation_values(config, name: str) -> None:
    """Combinations a single option's check cannot see: offline evaluation needs an offline algorithm."""
    if config.offline_evaluation_interval and not config.READS_OFFLINE_DATA:
        raise ValueError(f"{name} does not train from offline data, so it has no offline evaluation "
                         f"(offline_evaluation_interval={config.offline_evaluation_interval}): use BC, MARWIL, CQL "
                         "or IQL, or evaluate in an env with config.evaluation(evaluation_interval=N).")


__all__ = ["OFFLINE_EVALUATION_OPTIONS", "check_offline_evaluation_values"]
