"""Evaluation runners for Policy-based algorithms: a PolicyWorkerSet that answers what Algorithm.evaluate()
(algorithms/evaluation.py, shared with the RLModule algorithms) asks of an EnvRunnerGroup.

The evaluation config is `config.get_evaluation_config_object()` (evaluation_config applied, e.g.
explore=False; num_env_runners=evaluation_num_env_runners), so results land under
`evaluation/env_runners/...` exactly as for RLModule algorithms. Weights come from the training local runner, and
so do the observation filters' statistics (observation_filters.py), which evaluation runners use without
updating them.
"""
from collections.abc import Callable

from relayrl.policy.rollout.worker_set import PolicyWorkerSet


class PolicyEvalWorkerSet(PolicyWorkerSet):
    def healthy_env_runner_ids(self) -> list[int]:
        return [] if self._actors is None else self._actors.healthy_indices()

    def probe_unhealthy_env_runners(self) -> list[int]:
        return [] if self._actors is None else self._restore_due()

    def foreach_env_runner(self, func: Callable, local_env_runner: bool = True, healthy_only: bool = True,
                           remote_worker_ids=None, timeout_seconds=None, sampling: bool = False, **kwargs) -> list:
        out = [func(self._local)] if local_env_runner else []
        if self._actors is not None:
            ids = self._actors.healthy_indices() if remote_worker_ids is None else list(remote_worker_ids)
            if ids:
                out += [r.value for r in self._actors.call(ids, func=func, timeout=timeout_seconds, sampling=sampling)
                        if r.ok]
        return out

    def sync_weights(self, policies=None, from_worker_or_learner_group=None, to_worker_indices=None,
                     global_vars=None, connector_states_from=None, **kwargs) -> None:
        """The training runner's weights (Algorithm passes it as `connector_states_from`) to every eval runner."""
        source = from_worker_or_learner_group or connector_states_from
        if source is not None and source is not self._local:
            self._local.set_weights(source.get_weights(policies), global_vars or dict(source.global_vars))
        if source is not None and source is not self._local and getattr(source, "_filtering", False):
            self._local.sync_filters(source.filter_states())
        super().sync_weights(policies, from_worker_or_learner_group=self._local,
                             to_worker_indices=to_worker_indices, global_vars=global_vars)
        self.synchronize_filters(merge=False)  # (evaluation runners do not update theirs)


def make_policy_eval_group(config, policy_specs: dict, mapping_fn, train_runner) -> PolicyEvalWorkerSet | None:
    """The evaluation runners when evaluation_interval is set (else None), synced with `train_runner`."""
    if not config.evaluation_interval:
        return None
    eval_config = config.get_evaluation_config_object()
    eval_config.freeze()
    group = PolicyEvalWorkerSet(eval_config, policy_specs, mapping_fn)
    group.sync_weights(connector_states_from=train_runner)
    return group
