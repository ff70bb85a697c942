"""`Algorithm`: owns the EnvRunnerGroup and LearnerGroup; `train()` runs `training_step()` and reports.

An algorithm is a config, a module, a loss (its Learner) and a `training_step`.
"""
import datetime
import logging
import random
import time
from typing import Any, Dict, Optional

import numpy as np
import torch

from relayrl.callbacks import CallbackDispatch
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.env.env_runner_group import EnvRunnerGroup
from relayrl.metrics import (
    ENV_RUNNER_RESULTS,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
    MetricsLogger,
)

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
        self.metrics = MetricsLogger()
        self._counters: Dict[str, int] = {}
        self._seed_everything(config.seed)
        logging.getLogger("relayrl").setLevel("WARNING" if config.log_level == "WARN" else config.log_level)
        # One callbacks object per Algorithm (each EnvRunner builds its own from the config).
        self._callbacks = CallbackDispatch(config)
        self.callbacks = self._callbacks.callbacks
        self.setup(config)
        self._callbacks("on_algorithm_init", algorithm=self, metrics_logger=self.metrics)

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
        calls = 0
        with self.metrics.log_time(("timers", "training_iteration"), window=1):
            while True:
                with self.metrics.log_time(("timers", "training_step"), window=1):
                    self.training_step()
                calls += 1
                if self._iteration_done(start, sampled_before, trained_before):
                    break
        self.iteration += 1
        elapsed = time.perf_counter() - start
        self._time_total_s += elapsed
        result = self._compile_result(elapsed, calls)
        self._callbacks("on_train_result", algorithm=self, metrics_logger=self.metrics, result=result)
        return result

    step = train

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
        self.learner_group.shutdown()

    cleanup = stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
