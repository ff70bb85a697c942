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

from relayrl.algorithms.algorithm_state import AlgorithmState
from relayrl.algorithms.result_logger import ResultLogger
from relayrl.callbacks import CallbackDispatch
from relayrl.checkpoints.checkpointable import Checkpointable
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
from relayrl.tune.trainable_base import TrainableBase, split_tune_entries
from relayrl.tune.trainable_base import install as _install_tune_bridge

logger = logging.getLogger("relayrl")
# Algorithm becomes a ray.tune.Trainable once ray.tune is imported (never imports ray or ray.tune
# itself): relayrl's one import-time side effect; see relayrl/tune/trainable_base.py.
_install_tune_bridge()


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


def _sample_for_evaluation(env_runner, kwargs_by_index):
    """Runs on an evaluation EnvRunner (maybe a Ray actor): its share of the evaluation, then its metrics."""
    env_runner.sample(**kwargs_by_index[env_runner.worker_index])
    return env_runner.get_metrics()


class Algorithm(AlgorithmState, Checkpointable, TrainableBase):
    """Base class of all algorithms (PPO, ...)."""

    _checkpoint_kind = "algorithm"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    def __init__(self, config=None, env=None, logger_creator=None, **kwargs):
        # Ray Tune builds trials with `(config=<dict>, storage=...)`; its `__trial_info__`-style
        # entries go to ray.tune.Trainable's bookkeeping, not into the AlgorithmConfig.
        config, tune_entries = split_tune_entries(config)
        built_by_tune = "storage" in kwargs
        if config is None or isinstance(config, dict):
            config = self.get_default_config().update_from_dict(config or {})
        else:
            config = config.copy(copy_frozen=False)
        if env is not None:
            config.environment(env)
        config.validate()
        config.freeze()
        if built_by_tune:
            self._init_tune_trainable(tune_entries, kwargs["storage"])
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
        # Under Tune, Tune logs the results (unless logger_config asks for relayrl's files too).
        skip_logger = built_by_tune and logger_creator is None and config.logger_config is None
        self._result_logger = None if skip_logger else self._make_result_logger(config, logger_creator)
        self.setup(config)
        self._callbacks("on_algorithm_init", algorithm=self, metrics_logger=self.metrics)
        if built_by_tune:
            self._remember_initial_state()  # reuse_actors: Tune's reset() starts the next trial from here

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
        self.env_runner_group = EnvRunnerGroup(config=config, on_env_runners_recreated=self._on_env_runners_recreated)
        spaces = self.env_runner_group.get_spaces()
        module_spec = config.get_rl_module_spec(spaces=spaces)
        self.learner_group = config.build_learner_group(spaces=spaces, rl_module_spec=module_spec)
        # Start every runner from the learner's initial weights.
        self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group)
        self.eval_env_runner_group = self._make_eval_env_runner_group(config)

    def _make_eval_env_runner_group(self, config) -> Optional[EnvRunnerGroup]:
        """Evaluation EnvRunners (never the training ones), only when evaluation_interval is set.

        With evaluation_num_env_runners=0 one local runner evaluates; with n > 0 there are n
        remote runners (Ray actors) with worker_index 1..n.
        """
        if not config.evaluation_interval:
            return None
        eval_config = config.get_evaluation_config_object()
        eval_config.freeze()
        n = config.evaluation_num_env_runners
        group = EnvRunnerGroup(config=eval_config, local_env_runner=n == 0,
                               on_env_runners_recreated=self._on_env_runners_recreated)
        self._sync_eval_env_runners(group)
        return group

    def _on_env_runners_recreated(self, *, env_runner_group, env_runner_indices) -> None:
        """Failed remote runners were replaced (weights and connector states already restored)."""
        self._callbacks("on_env_runners_recreated", algorithm=self, env_runner_group=env_runner_group,
                        env_runner_indices=env_runner_indices, is_evaluation=env_runner_group.config.in_evaluation)

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

    # -- inference (RLlib's compute_single_action / compute_actions; see docs/exploration.md) -------
    def compute_single_action(self, observation=None, state=None, *, prev_action=None, prev_reward=None, info=None,
                              input_dict=None, policy_id=DEFAULT_MODULE_ID, full_fetch=False, explore=None,
                              timestep=None, episode=None, unsquash_action=None, clip_action=None, module_id=None,
                              **kwargs):
        """The env action for one observation, computed by the local EnvRunner's pipelines and module.

        explore=None uses config.explore. With `state` (recurrent modules) or full_fetch=True, returns
        (action, state_out, extra_fetches). prev_action / prev_reward / episode are accepted and unused.
        """
        from relayrl.exploration.inference import compute_single_action

        return compute_single_action(self, observation, state, info=info, input_dict=input_dict, policy_id=policy_id,
                                     module_id=module_id, full_fetch=full_fetch, explore=explore, timestep=timestep,
                                     unsquash_action=unsquash_action, clip_action=clip_action)

    def compute_actions(self, observations, state=None, *, prev_action=None, prev_reward=None, info=None,
                        policy_id=DEFAULT_MODULE_ID, full_fetch=False, explore=None, timestep=None, episodes=None,
                        unsquash_actions=None, clip_actions=None, module_id=None, **kwargs):
        """Actions for a dict {agent_id: obs} (a dict back) or a batch of observations (an array back),
        in one forward pass; with `state` or full_fetch=True: (actions, state_outs, extra_fetches)."""
        from relayrl.exploration.inference import compute_actions

        return compute_actions(self, observations, state, info=info, policy_id=policy_id, module_id=module_id,
                               full_fetch=full_fetch, explore=explore, timestep=timestep,
                               unsquash_actions=unsquash_actions, clip_actions=clip_actions)

    # -- training -------------------------------------------------------------------------------
    def training_step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement training_step().")

    # train() (TrainableBase) runs step(): directly, or through ray.tune.Trainable.train under Tune.
    def step(self) -> Dict[str, Any]:
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
        group = self.eval_env_runner_group
        group.probe_unhealthy_env_runners()  # replace eval runners that failed last time
        on_local = group.num_remote_env_runners() == 0
        indices = [0] if on_local else group.healthy_env_runner_ids()
        timeout = cfg.evaluation_sample_timeout_s

        def sample(kwargs_by_index):  # one call per runner (all remote runners at once): sample, then metrics
            return group.foreach_env_runner(lambda runner: _sample_for_evaluation(runner, kwargs_by_index),
                                            local_env_runner=on_local, timeout_seconds=timeout,
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
                kwargs = {i: {"num_timesteps": share, "force_reset": True} for i in indices}
            else:
                base, extra = divmod(duration, n)  # the first `extra` runners run one more episode
                kwargs = {i: {"num_episodes": base + (1 if k < extra else 0)} for k, i in enumerate(indices)}
            metrics += sample({i: kw for i, kw in kwargs.items() if next(iter(kw.values())) > 0})
        if not indices:
            logger.warning("evaluation found no healthy evaluation EnvRunner; it reports no episodes this time")
        key = (EVALUATION_RESULTS, ENV_RUNNER_RESULTS)
        self.metrics.merge_and_log_n_dicts(metrics, key=key)
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
        if self.env_runner_group.is_remote:  # health of the remote runners (docs/distributed.md)
            health = self.env_runner_group.fault_tolerance_metrics()
            result.update(health)
            result["fault_tolerance"] = {"num_healthy_workers": health["num_healthy_env_runners"],
                                         "num_remote_worker_restarts": health["num_remote_env_runner_restarts"]}
        return result

    # -- shared training_step pieces -------------------------------------------------------------
    def sample_episodes(self, *, max_env_steps: int):
        """Sample at least `max_env_steps` env steps from the runners; log their metrics."""
        group = self.env_runner_group
        with self.metrics.log_time(("timers", "env_runner_sampling_timer"), window=1):
            if group.is_remote:  # all healthy Ray actors at once; failures handled by the group
                episodes, steps, runner_metrics = group.sample_episodes(max_env_steps=max_env_steps)
            else:
                episodes, steps, runner = [], 0, self.env_runner
                while steps < max_env_steps:
                    new = runner.sample()
                    episodes.extend(new)
                    steps += sum(len(e) for e in new)
                runner_metrics = [runner.get_metrics()]
        self.metrics.merge_and_log_n_dicts(runner_metrics, key=ENV_RUNNER_RESULTS)
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

    # -- checkpoints (state: algorithm_state.py; format: relayrl/checkpoints/) ---------------------
    def _checkpoint_extra_files(self) -> Dict[str, Any]:
        if not self.config.get("export_native_model_files", False):
            return {}
        from relayrl.checkpoints.export import native_model_writers

        return native_model_writers(self.learner_group.get_module())

    def save(self, checkpoint_dir: Optional[str] = None, prev_state=None):
        """Write a checkpoint (a fresh directory when None); returns an object with `.checkpoint.path`."""
        if self._built_by_tune:  # Tune's protocol: ray.tune.Trainable.save -> save_checkpoint()
            return self._tune_trainable_call("save", checkpoint_dir)
        from relayrl.checkpoints.save_result import SaveResult

        return SaveResult(self.save_to_path(checkpoint_dir), metrics={"training_iteration": self.iteration})

    def restore(self, checkpoint_path) -> None:
        """Load a checkpoint written by save() / save_to_path() into this algorithm."""
        if self._built_by_tune:  # Tune's protocol: ray.tune.Trainable.restore -> load_checkpoint()
            return self._tune_trainable_call("restore", checkpoint_path)
        self.restore_from_path(checkpoint_path)

    @classmethod
    def from_checkpoint(cls, path, *, config=None, config_overrides: Optional[Dict[str, Any]] = None, env=None,
                        trusted=None, **kwargs):
        """Rebuild the algorithm from a checkpoint alone.

        The stored config is data: names in it (env, callbacks, connector, module classes) resolve only to
        relayrl's classes, env classes this process has imported, registered envs and what you pass in
        `trusted` (objects, or module names); see docs/checkpoints.md. `config_overrides` supplies options
        that could not be stored (lambdas, closures), `env` the env, `config` replaces the stored config.
        """
        from relayrl.algorithms.config_json import algorithm_from_checkpoint
        from relayrl.checkpoints.save_result import as_path

        return algorithm_from_checkpoint(cls, as_path(path), config=config, config_overrides=config_overrides,
                                         env=env, trusted=trusted)

    def export_policy_model(self, export_dir: str, policy_id: str = DEFAULT_MODULE_ID, onnx=None) -> str:
        """Write the module's inference forward (obs -> action_dist_inputs) as TorchScript `<export_dir>/model.pt`."""
        if onnx:
            raise ValueError("ONNX export is not supported; export_policy_model writes TorchScript (onnx=None).")
        import os

        from relayrl.checkpoints.export import _module_or_raise, export_torchscript

        module = _module_or_raise(self.learner_group.get_module(), policy_id)
        os.makedirs(export_dir, exist_ok=True)
        return export_torchscript(module, os.path.join(export_dir, "model.pt"))

    # -- reset_config (Ray Tune: reuse_actors, PBT) -------------------------------------------------
    def reset_config(self, new_config) -> bool:
        """Apply new hyper-parameters in place; True if done, False (nothing changed) if a rebuild is needed.

        `new_config`: an AlgorithmConfig or a dict of option keys. lr (and lr schedules, in every
        Learner's optimiser param groups), entropy_coeff, clip_param, vf_clip_param, kl_coeff/kl_target,
        gamma, lambda, batch sizes, num_epochs, exploration and env_config (envs recreated) can change
        (relayrl/tune/reset_config.py lists them); changes to the model, env, runners, framework, ...
        return False. Afterwards `algo.config` is the new config.
        """
        from relayrl.tune.reset_config import plan_config_reset

        current = self.__dict__.get("_config_before_reset", self.config)  # Trainable.reset swaps in a dict
        plan = plan_config_reset(self, current, new_config)
        if plan is None:
            return False
        self._apply_hyperparameters(plan.config, changed=plan.changed, previous=current)
        return True

    def _apply_hyperparameters(self, config, *, changed=None, previous=None) -> None:
        """Make `config` the algorithm's config; push it into the Learners and the changed options
        (`changed`, or all that differ from `previous`) into the EnvRunners' configs."""
        from relayrl.tune.reset_config import ENV_OPTIONS, same_value

        previous = self.config if previous is None else previous
        if changed is None:
            changed = [o.name for o in type(config).options()
                       if not same_value(previous._values[o.name], config._values[o.name])]
        self.config = config
        timestep = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        self.learner_group.config = config
        self.learner_group.foreach_learner(lambda learner: learner.apply_hyperparameters(config, timestep=timestep))
        logging.getLogger("relayrl").setLevel("WARNING" if config.log_level == "WARN" else config.log_level)
        self.env_runner_group.config = config
        _push_options_to_runners(self.env_runner_group, config, changed, ENV_OPTIONS)
        if self.eval_env_runner_group is not None:
            eval_config = config.get_evaluation_config_object()
            self.eval_env_runner_group.config = eval_config
            _push_options_to_runners(self.eval_env_runner_group, eval_config, changed, ENV_OPTIONS)

    # -- lifetime ---------------------------------------------------------------------------------
    # stop() (TrainableBase) runs cleanup(): directly, or through ray.tune.Trainable.stop under Tune.
    def cleanup(self) -> None:
        """Close envs and release learners; the algorithm is unusable afterwards."""
        self.env_runner_group.stop()
        if getattr(self, "eval_env_runner_group", None) is not None:
            self.eval_env_runner_group.stop()
        self.learner_group.shutdown()
        close = getattr(getattr(self, "_result_logger", None), "close", None)
        if callable(close):
            close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _push_options_to_runners(group, config, changed, env_options) -> None:
    """Set the changed options on every EnvRunner's own config copy; recreate the envs if the env
    settings changed (the runners keep their modules and connector states)."""
    updates = {name: config._values[name] for name in changed}
    if not updates:
        return
    remake_env = any(name in env_options for name in updates)

    def update(env_runner):
        env_runner.config._set_options(updates)
        if remake_env:
            env_runner.make_env()

    group.foreach_env_runner(update)
