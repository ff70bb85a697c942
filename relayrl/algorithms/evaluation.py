"""Evaluation (the `AlgorithmEvaluation` mixin of Algorithm): evaluation EnvRunners, `evaluate()`, and
evaluation in a thread beside the training step (`evaluation_parallel_to_training`)."""
import logging
import math
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Optional

from relayrl.core.rng_isolation import isolated_global_rngs
from relayrl.metrics import ENV_RUNNER_RESULTS, EVALUATION_RESULTS
from relayrl.metrics.legacy_result_keys import add_policy_reward_mean

if TYPE_CHECKING:  # imported where built: Policy-based algorithms never load the EnvRunner stack
    from relayrl.env.env_runner_group import EnvRunnerGroup

logger = logging.getLogger("relayrl")

EPISODE_KEYS = ("episode_return_mean", "episode_return_min", "episode_return_max", "episode_len_mean",
                "episode_len_min", "episode_len_max")


def _sample_for_evaluation(env_runner, kwargs_by_index):
    """Runs on an evaluation EnvRunner (maybe a Ray actor): its share of the evaluation, then its metrics."""
    env_runner.sample(**kwargs_by_index[env_runner.worker_index])
    return env_runner.get_metrics()


class AlgorithmEvaluation:
    """Evaluation EnvRunners and `evaluate()`; mixed into Algorithm."""

    def _make_eval_env_runner_group(self, config) -> Optional["EnvRunnerGroup"]:
        """Evaluation EnvRunners (never the training ones), only when evaluation_interval is set.

        With evaluation_num_env_runners=0 one local runner evaluates; with n > 0 there are n
        remote runners (Ray actors) with worker_index 1..n.
        """
        if not config.evaluation_interval:
            return None
        eval_config = config.get_evaluation_config_object()
        eval_config.freeze()
        n = config.evaluation_num_env_runners
        from relayrl.env.env_runner_group import EnvRunnerGroup

        with isolated_global_rngs():  # a run with evaluation trains exactly as one without
            group = EnvRunnerGroup(config=eval_config, local_env_runner=n == 0,
                                   on_env_runners_recreated=self._on_env_runners_recreated)
        self._sync_eval_env_runners(group)
        return group

    @property
    def evaluation_workers(self) -> Optional["EnvRunnerGroup"]:
        """RLlib's older name for `eval_env_runner_group`."""
        return self.eval_env_runner_group

    @property
    def evaluation_config(self):
        """The config the evaluation EnvRunners use (None without evaluation)."""
        group = self.eval_env_runner_group
        return group.config if group is not None else None

    def _train_with_parallel_evaluation(self, start, sampled_before, trained_before):
        """Training steps in this thread, evaluation (pre-step weights) in another at the same time."""
        self._sync_eval_env_runners(self.eval_env_runner_group)  # weights from before the step
        train_done = threading.Event()
        outcome: Dict[str, Any] = {}

        def run_evaluation():
            try:
                outcome["result"] = self._evaluate(train_done=train_done, sync=False)
            except BaseException as error:  # re-raised in the training thread
                outcome["error"] = error

        thread = threading.Thread(target=run_evaluation, name="relayrl-evaluation", daemon=True)
        thread.start()
        try:
            calls = self._run_training_steps(start, sampled_before, trained_before)
        finally:
            train_done.set()
            thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return calls, outcome["result"]

    # -- evaluation -------------------------------------------------------------------------------
    def evaluate(self, parallel_train_future=None) -> Dict[str, Any]:
        """One evaluation run on the evaluation EnvRunners with the current weights.

        Returns `{"env_runners": {...episode metrics...}}` (or, with a custom_evaluation_function, its metrics
        dict), as RLlib 2.60's does; train() reports the same under `result["evaluation"]`.
        """
        with isolated_global_rngs():  # the evaluation's draws do not move the training run's
            return self._evaluate(train_done=None, sync=True)

    def _sync_eval_env_runners(self, group: Optional["EnvRunnerGroup"]) -> None:
        if group is None:
            return
        group.sync_weights(from_worker_or_learner_group=self.learner_group,
                           connector_states_from=self.env_runner)

    def _evaluate(self, *, train_done: Optional[threading.Event], sync: bool) -> Dict[str, Any]:
        group = self.eval_env_runner_group
        if group is None:
            raise ValueError("evaluate() needs evaluation EnvRunners: set config.evaluation("
                             "evaluation_interval=N) (N > 0) before building the algorithm")
        self._callbacks("on_evaluate_start", algorithm=self, metrics_logger=self.metrics)
        if sync:
            self._sync_eval_env_runners(group)
        custom = self.config.custom_evaluation_function
        with self.metrics.log_time((EVALUATION_RESULTS, "timers", "evaluation_iteration"), window=1):
            if custom is not None:
                eval_results = custom(self, group)
                if isinstance(eval_results, tuple):  # RLlib 2.x's (metrics, env_steps, agent_steps)
                    eval_results = self._logged_evaluation_metrics() or eval_results[0]
                if eval_results is None:
                    eval_results = {}
            else:
                eval_results = self._evaluate_built_in(train_done)
        add_policy_reward_mean(eval_results)
        self._callbacks("on_evaluate_end", algorithm=self, metrics_logger=self.metrics,
                        evaluation_metrics=eval_results)
        return eval_results

    def _logged_evaluation_metrics(self) -> Dict[str, Any]:
        """What a custom evaluation function logged under `evaluation/env_runners` (RLlib 2.x reports that, not the
        dict it returns, e.g. `algorithm.metrics.aggregate(runner_metrics, key=("evaluation", "env_runners"))`)."""
        key = (EVALUATION_RESULTS, ENV_RUNNER_RESULTS)
        return {ENV_RUNNER_RESULTS: self.metrics.reduce(key=key)} if key in self.metrics else {}

    def _evaluate_built_in(self, train_done: Optional[threading.Event]) -> Dict[str, Any]:
        cfg = self.config
        group = self.eval_env_runner_group
        group.probe_unhealthy_env_runners()  # replace eval runners that failed last time
        on_local = group.num_remote_env_runners() == 0
        indices = [0] if on_local else group.healthy_env_runner_ids()
        timeout = cfg.evaluation_sample_timeout_s

        def sample(kwargs_by_index):  # one call per runner (all remote runners at once): sample, then metrics
            return group.foreach_env_runner(lambda runner: _sample_for_evaluation(runner, kwargs_by_index),
                                            local_env_runner=on_local, timeout_seconds=timeout, sampling=True,
                                            remote_worker_ids=[i for i in indices if i and i in kwargs_by_index])

        metrics, begin = [], time.perf_counter()
        if cfg.evaluation_duration == "auto":
            # Sample one episode per runner per round until the parallel training step is done.
            rounds = 0
            while rounds == 0 or not (train_done is None or train_done.is_set()):
                metrics += sample({i: {"num_episodes": 1} for i in indices})
                rounds += 1
                if time.perf_counter() - begin > timeout:
                    logger.warning("evaluation stopped after evaluation_sample_timeout_s=%s s", timeout)
                    break
        elif indices:
            n, duration = len(indices), cfg.evaluation_duration
            if cfg.evaluation_duration_unit == "timesteps":
                share = math.ceil(duration / n)  # RLlib rounds the total up to a multiple of n
                reset = cfg.evaluation_force_reset_envs_before_iteration
                kwargs = {i: {"num_timesteps": share, "force_reset": reset} for i in indices}
            else:
                base, extra = divmod(duration, n)  # the first `extra` runners run one more episode
                kwargs = {i: {"num_episodes": base + (1 if k < extra else 0)} for k, i in enumerate(indices)}
            metrics += sample({i: kw for i, kw in kwargs.items() if next(iter(kw.values())) > 0})
        if not indices:
            logger.warning("evaluation found no healthy evaluation EnvRunner; it reports no episodes this time")
        key = (EVALUATION_RESULTS, ENV_RUNNER_RESULTS)
        self.metrics.merge_and_log_n_dicts(metrics, key=key)
        env_results = self.metrics.reduce(key=key) if key in self.metrics else {}
        for name in EPISODE_KEYS:
            env_results.setdefault(name, float("nan"))
        env_results.setdefault("num_episodes", 0)
        # The old API stack's evaluation keys (seed 000's sample output): episodes of this evaluation and the
        # episodes' custom_metrics ({} when no episode set any).
        env_results["episodes_this_iter"] = env_results["num_episodes"]
        env_results.setdefault("custom_metrics", {})
        return {ENV_RUNNER_RESULTS: env_results}
