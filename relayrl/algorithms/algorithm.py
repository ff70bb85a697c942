"""`Algorithm`: owns the EnvRunnerGroup and LearnerGroup; `train()` runs `training_step()` and reports.

An algorithm is a config, a module, a loss (its Learner) and a `training_step`.
"""
import datetime
import logging
import math
import random
import threading
import time
from typing import Any, Dict, Optional

import numpy as np
import torch

from relayrl.algorithms.result_logger import ResultLogger
from relayrl.callbacks import CallbackDispatch
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.env.env_runner_group import EnvRunnerGroup
from relayrl.metrics import (
    ENV_RUNNER_RESULTS,
    EVALUATION_RESULTS,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
    MetricsLogger,
)

logger = logging.getLogger("relayrl")


def _locked(name):
    method = getattr(MetricsLogger, name)

    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = method.__doc__
    return wrapper


class _ThreadSafeMetricsLogger(MetricsLogger):
    """The Algorithm's logger: a parallel evaluation thread and the training step may both log."""

    def __init__(self):
        super().__init__()
        self._lock = threading.RLock()


for _name in ("log_value", "log_dict", "set_value", "peek", "reduce", "reduce_for_merge",
              "merge_and_log_n_dicts", "delete", "reset", "get_state", "set_state", "__contains__"):
    setattr(_ThreadSafeMetricsLogger, _name, _locked(_name))
del _name


_EPISODE_KEYS = ("episode_return_mean", "episode_return_min", "episode_return_max", "episode_len_mean",
                 "episode_len_min", "episode_len_max")


class Algorithm:
    """Base class of all algorithms (PPO, ...)."""

    def __init__(self, config=None, env=None, logger_creator=None, **kwargs):
        if config is None or isinstance(config, dict):
            config = self.get_default_config().update_from_dict(config or {})
        else:
            config = config.copy(copy_frozen=False)
        if env is not None:
            config.environment(env)
        config.validate()
        config.freeze()
        self.config = config
        self.iteration = 0
        self._time_total_s = 0.0
        self.metrics = _ThreadSafeMetricsLogger()
        self._counters: Dict[str, int] = {}
        self._seed_everything(config.seed)
        logging.getLogger("relayrl").setLevel("WARNING" if config.log_level == "WARN" else config.log_level)
        # One callbacks object per Algorithm (each EnvRunner builds its own from the config).
        self._callbacks = CallbackDispatch(config)
        self.callbacks = self._callbacks.callbacks
        self._result_logger = self._make_result_logger(config, logger_creator)
        self.setup(config)
        self._callbacks("on_algorithm_init", algorithm=self, metrics_logger=self.metrics)

    def _make_result_logger(self, config, logger_creator):
        """RLlib's `logger_creator(config)` (an object with on_result(), maybe logdir and close()),
        else a ResultLogger from `config.logger_config`."""
        if logger_creator is not None:
            result_logger = logger_creator(config)
        else:
            name = type(self).__name__
            result_logger = ResultLogger.from_config(config.logger_config, name, config.env)
        return result_logger

    @property
    def logdir(self) -> Optional[str]:
        """The folder of result.json and the TensorBoard event files (None with type "none")."""
        return getattr(self._result_logger, "logdir", None)

    @classmethod
    def get_default_config(cls):
        raise NotImplementedError(f"{cls.__name__} has no default config.")

    # -- setup --------------------------------------------------------------------------------
    @staticmethod
    def _seed_everything(seed: Optional[int]) -> None:
        if seed is None:
            return
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)

    def setup(self, config) -> None:
        self.env_runner_group = EnvRunnerGroup(config=config)
        spaces = self.env_runner_group.get_spaces()
        module_spec = config.get_rl_module_spec(spaces=spaces)
        self.learner_group = config.build_learner_group(spaces=spaces, rl_module_spec=module_spec)
        # Start every runner from the learner's initial weights.
        self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group)
        self.eval_env_runner_group = self._make_eval_env_runner_group(config)

    def _make_eval_env_runner_group(self, config) -> Optional[EnvRunnerGroup]:
        """Evaluation EnvRunners (never the training ones), only when evaluation_interval is set.

        With evaluation_num_env_runners=0 one local runner evaluates; with n > 0 there are n
        in-process runners with worker_index 1..n (Ray actors come later).
        """
        if not config.evaluation_interval:
            return None
        eval_config = config.get_evaluation_config_object()
        eval_config.freeze()
        n = config.evaluation_num_env_runners
        group = EnvRunnerGroup(config=eval_config, local_env_runner=n == 0, num_in_process_env_runners=n)
        self._sync_eval_env_runners(group)
        return group

    @property
    def evaluation_workers(self) -> Optional[EnvRunnerGroup]:
        """RLlib's older name for `eval_env_runner_group`."""
        return self.eval_env_runner_group

    @property
    def evaluation_config(self):
        """The config the evaluation EnvRunners use (None without evaluation)."""
        group = self.eval_env_runner_group
        return group.config if group is not None else None

    # -- RLlib's accessors ---------------------------------------------------------------------
    @property
    def env_runner(self):
        return self.env_runner_group.local_env_runner

    @property
    def workers(self) -> EnvRunnerGroup:
        """The seeds' older name for `env_runner_group`."""
        return self.env_runner_group

    def get_module(self, module_id: str = DEFAULT_MODULE_ID):
        """The RLModule of the local EnvRunner (the learner's if there is none); None for unknown IDs."""
        runner = self.env_runner
        if runner is not None and module_id == DEFAULT_MODULE_ID:
            return runner.module
        module = self.learner_group.get_module()
        return module.get(module_id)

    # -- training -------------------------------------------------------------------------------
    def training_step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement training_step().")

    def train(self) -> Dict[str, Any]:
        """One iteration: `training_step()` until the reporting minima are met; returns the result dict."""
        start = time.perf_counter()
        sampled_before = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        trained_before = self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0)
        interval = self.config.evaluation_interval
        evaluate_this_iter = bool(interval) and (self.iteration + 1) % interval == 0
        parallel = evaluate_this_iter and self.config.evaluation_parallel_to_training
        eval_results = None
        with self.metrics.log_time(("timers", "training_iteration"), window=1):
            if parallel:
                calls, eval_results = self._train_with_parallel_evaluation(start, sampled_before, trained_before)
            else:
                calls = self._run_training_steps(start, sampled_before, trained_before)
        self.iteration += 1
        if evaluate_this_iter and not parallel:
            eval_results = self.evaluate()
        elapsed = time.perf_counter() - start
        self._time_total_s += elapsed
        result = self._compile_result(elapsed, calls)
        if eval_results is not None:
            result.update(eval_results)
        self._callbacks("on_train_result", algorithm=self, metrics_logger=self.metrics, result=result)
        if self._result_logger is not None:
            self._result_logger.on_result(result)
        return result

    step = train

    def _run_training_steps(self, start, sampled_before, trained_before) -> int:
        calls = 0
        while True:
            with self.metrics.log_time(("timers", "training_step"), window=1):
                self.training_step()
            calls += 1
            if self._iteration_done(start, sampled_before, trained_before):
                return calls

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

        Returns `{"evaluation": {"env_runners": {...episode metrics...}}}` (or, with a
        custom_evaluation_function, `{"evaluation": <its metrics dict>}`).
        """
        return self._evaluate(train_done=None, sync=True)

    def _sync_eval_env_runners(self, group: Optional[EnvRunnerGroup]) -> None:
        if group is None:
            return
        group.sync_weights(from_worker_or_learner_group=self.learner_group,
                           connector_states_from=self.env_runner)

    def _eval_runners(self):
        group = self.eval_env_runner_group
        return group.remote_env_runners or [group.local_env_runner]

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
                if isinstance(eval_results, tuple):  # RLlib's older (metrics, env_steps, agent_steps)
                    eval_results = eval_results[0]
                if eval_results is None:
                    eval_results = {}
            else:
                eval_results = self._evaluate_built_in(train_done)
        self._callbacks("on_evaluate_end", algorithm=self, metrics_logger=self.metrics,
                        evaluation_metrics=eval_results)
        return {EVALUATION_RESULTS: eval_results}

    def _evaluate_built_in(self, train_done: Optional[threading.Event]) -> Dict[str, Any]:
        cfg = self.config
        runners = self._eval_runners()
        timeout = cfg.evaluation_sample_timeout_s
        begin = time.perf_counter()
        if cfg.evaluation_duration == "auto":
            # Sample one episode per runner per round until the parallel training step is done.
            rounds = 0
            while rounds == 0 or not (train_done is None or train_done.is_set()):
                for runner in runners:
                    runner.sample(num_episodes=1)
                rounds += 1
                if time.perf_counter() - begin > timeout:
                    logger.warning("evaluation stopped after evaluation_sample_timeout_s=%s s", timeout)
                    break
        else:
            n, duration = len(runners), cfg.evaluation_duration
            if cfg.evaluation_duration_unit == "timesteps":
                shares = [math.ceil(duration / n)] * n  # RLlib rounds the total up to a multiple of n
            else:
                base, extra = divmod(duration, n)  # the first `extra` runners run one more episode
                shares = [base + (1 if i < extra else 0) for i in range(n)]
            for runner, share in zip(runners, shares):
                if share == 0:
                    continue
                if time.perf_counter() - begin > timeout:
                    logger.warning("evaluation stopped after evaluation_sample_timeout_s=%s s", timeout)
                    break
                if cfg.evaluation_duration_unit == "timesteps":
                    runner.sample(num_timesteps=share, force_reset=True)
                else:
                    runner.sample(num_episodes=share)
        key = (EVALUATION_RESULTS, ENV_RUNNER_RESULTS)
        self.metrics.merge_and_log_n_dicts([runner.get_metrics() for runner in runners], key=key)
        env_results = self.metrics.reduce(key=key) if key in self.metrics else {}
        for name in _EPISODE_KEYS:
            env_results.setdefault(name, float("nan"))
        env_results.setdefault("num_episodes", 0)
        return {ENV_RUNNER_RESULTS: env_results}

    def _iteration_done(self, start, sampled_before, trained_before) -> bool:
        cfg = self.config
        if cfg.min_time_s_per_iteration and time.perf_counter() - start < cfg.min_time_s_per_iteration:
            return False
        sampled = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0) - sampled_before
        if sampled < cfg.min_sample_timesteps_per_iteration:
            return False
        trained = self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0) - trained_before
        return trained >= cfg.min_train_timesteps_per_iteration

    def _compile_result(self, elapsed: float, calls: int) -> Dict[str, Any]:
        result = self.metrics.reduce()
        result.pop(EVALUATION_RESULTS, None)  # attached by train() only in iterations that evaluate
        env_results = result.setdefault(ENV_RUNNER_RESULTS, {})
        for key in _EPISODE_KEYS:
            env_results.setdefault(key, float("nan"))
        env_results.setdefault("num_episodes", 0)
        result.setdefault(LEARNER_RESULTS, {})
        result.update({
            NUM_ENV_STEPS_SAMPLED_LIFETIME: self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0),
            NUM_ENV_STEPS_TRAINED_LIFETIME: self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0),
            "num_training_step_calls_per_iteration": calls,
            "training_iteration": self.iteration,
            "time_this_iter_s": elapsed,
            "time_total_s": self._time_total_s,
            "timesteps_total": self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0),
            "date": datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S"),
            "timestamp": int(time.time()),
            "done": False,
        })
        return result

    # -- shared training_step pieces -------------------------------------------------------------
    def sample_episodes(self, *, max_env_steps: int):
        """Sample at least `max_env_steps` env steps from the runners; log their metrics."""
        episodes, steps = [], 0
        runner = self.env_runner
        with self.metrics.log_time(("timers", "env_runner_sampling_timer"), window=1):
            while steps < max_env_steps:
                new = runner.sample()
                episodes.extend(new)
                steps += sum(len(e) for e in new)
        self.metrics.merge_and_log_n_dicts([runner.get_metrics()], key=ENV_RUNNER_RESULTS)
        if steps == 0:
            raise RuntimeError("Sampling returned no env steps this iteration; check the env and rollout settings.")
        self._counters[NUM_ENV_STEPS_SAMPLED_LIFETIME] = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0) + steps
        return episodes, steps

    def update_learners(self, episodes, steps: int) -> Dict[str, Any]:
        timesteps = {NUM_ENV_STEPS_SAMPLED_LIFETIME: self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)}
        with self.metrics.log_time(("timers", "learner_update_timer"), window=1):
            results = self.learner_group.update(episodes=episodes, timesteps=timesteps)
        self.metrics.log_dict(results, key=LEARNER_RESULTS, window=1)
        self._counters[NUM_ENV_STEPS_TRAINED_LIFETIME] = self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0) + steps
        return results

    def sync_weights(self) -> None:
        with self.metrics.log_time(("timers", "synch_weights"), window=1):
            self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group)

    # -- lifetime ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """Close envs and release learners; the algorithm is unusable afterwards."""
        self.env_runner_group.stop()
        if getattr(self, "eval_env_runner_group", None) is not None:
            self.eval_env_runner_group.stop()
        self.learner_group.shutdown()
        close = getattr(getattr(self, "_result_logger", None), "close", None)
        if callable(close):
            close()

    cleanup = stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
