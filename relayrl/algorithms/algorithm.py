"""`Algorithm`: owns the EnvRunnerGroup and LearnerGroup; `train()` runs `training_step()` and reports.

An algorithm is a config, a module, a loss (its Learner) and a `training_step`.
"""
import copy
import datetime
import logging
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from relayrl.algorithms.algorithm_state import AlgorithmState
from relayrl.algorithms.algorithm_weights import AlgorithmWeights
from relayrl.algorithms.evaluation import EPISODE_KEYS, AlgorithmEvaluation
from relayrl.algorithms.inference import AlgorithmInference
from relayrl.algorithms.module_changes import AlgorithmModuleChanges
from relayrl.algorithms.resolved_defaults import forget_resolved_defaults
from relayrl.algorithms.result_logger import ResultLogger
from relayrl.algorithms.stale_learner_results import drop_untrained_modules_results
from relayrl.algorithms.video_summaries import TensorBoardVideos
from relayrl.callbacks import CallbackDispatch
from relayrl.checkpoints.checkpointable import Checkpointable
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.core.global_seed import seed_everything
from relayrl.env.wrappers.video_recorder import with_video_dir
from relayrl.metrics import (
    ENV_RUNNER_RESULTS,
    EVALUATION_RESULTS,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
)
from relayrl.metrics.legacy_result_keys import add_legacy_result_keys, add_policy_reward_mean
from relayrl.metrics.thread_safe_metrics_logger import ThreadSafeMetricsLogger
from relayrl.tune.trainable_base import TrainableBase, split_tune_entries

if TYPE_CHECKING:  # imported where built: Policy-based algorithms never load the EnvRunner stack
    from relayrl.env.env_runner_group import EnvRunnerGroup

logger = logging.getLogger("relayrl")
# Algorithm becomes a ray.tune.Trainable once ray.tune is imported: the hook is installed by
# `import relayrl` (relayrl/__init__.py, relayrl/tune/trainable_base.py).


class Algorithm(AlgorithmEvaluation, AlgorithmInference, AlgorithmModuleChanges, AlgorithmState, AlgorithmWeights,
                Checkpointable, TrainableBase):
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
        forget_resolved_defaults(config)  # what an earlier build picked (algo.config.copy()) is picked afresh
        config.validate()
        self.validate_config(config)
        self.resolved_defaults = self._resolve_defaults(config)  # lines saying what was picked for this run
        config.freeze()
        if built_by_tune:
            self._init_tune_trainable(tune_entries, kwargs["storage"])
        self.config = config
        self.iteration = 0
        self._time_total_s = 0.0
        self._last_evaluation_results: Optional[Dict[str, Any]] = None  # carried into iterations that do not evaluate
        self.metrics = ThreadSafeMetricsLogger()
        self._counters: Dict[str, int] = {}
        seed_everything(config.seed)
        logging.getLogger("relayrl").setLevel("WARNING" if config.log_level == "WARN" else config.log_level)
        # One callbacks object per Algorithm (each EnvRunner builds its own from the config).
        self._callbacks = CallbackDispatch(config)
        self.callbacks = self._callbacks.callbacks
        # Under Tune, Tune logs the results (unless logger_config asks for relayrl's files too).
        skip_logger = built_by_tune and logger_creator is None and config.logger_config is None
        self._result_logger = None if skip_logger else self._make_result_logger(config, logger_creator)
        self.config = config = with_video_dir(config, self.logdir)
        self._tensorboard_videos = TensorBoardVideos.create(config, self._result_logger)
        self.setup(config)
        self._callbacks("on_algorithm_init", algorithm=self, metrics_logger=self.metrics)
        if built_by_tune:
            self._remember_initial_state()  # reuse_actors: Tune's reset() starts the next trial from here

    def _resolve_defaults(self, config) -> List[str]:
        """The run-dependent defaults (relayrl/algorithms/resolved_defaults/): the env's own vector env where safe,
        a stateful module's sequence settings. Policy-API algorithms run their own runners and keep the config."""
        from relayrl.algorithms.resolved_defaults import resolve_defaults
        from relayrl.policy.policy_algorithm import policy_class_for

        if policy_class_for(self, config) is not None:
            return []
        notes = resolve_defaults(config)
        if notes:
            config.validate()  # the values picked must fit the rest, as the user's do
        return notes

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
        if _defines_policy_class(cls):  # seed 001: an Algorithm subclass with only get_default_policy_class
            from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig

            return PolicyAlgorithmConfig(algo_class=cls)
        raise NotImplementedError(f"{cls.__name__} has no default config.")

    def validate_config(self, config) -> None:
        """RLlib's old-stack hook for an Algorithm subclass's own checks of its config (raise to refuse it); called
        after `config.validate()`, before anything is built. The base checks nothing more."""

    @classmethod
    def get_default_policy_class(cls, config):
        """The old API stack's Policy class this algorithm runs (relayrl/policy/); None: RLModules and Learners."""
        return None

    # -- setup --------------------------------------------------------------------------------
    def setup(self, config) -> None:
        from relayrl.policy.policy_algorithm import policy_class_for, setup_policy_algorithm

        policy_class = policy_class_for(self, config)
        if policy_class is not None:  # the Policy API runs instead of RLModules and Learners
            setup_policy_algorithm(self, config, policy_class)
            return
        _check_new_api_stack(config, type(self).__name__)
        from relayrl.algorithms.module_state_loading import load_module_states
        from relayrl.env.env_runner_group import EnvRunnerGroup

        self.env_runner_group = EnvRunnerGroup(config=config, on_env_runners_recreated=self._on_env_runners_recreated)
        spaces = self.env_runner_group.get_spaces()
        module_spec = config.get_module_spec_for_learner(spaces)
        self.learner_group = config._learner_group_for_algorithm(spaces=spaces, rl_module_spec=module_spec)
        load_module_states(self.learner_group, config.rl_module_spec, module_spec)
        # Start every runner from the learner's initial weights.
        self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group)
        self.eval_env_runner_group = self._make_eval_env_runner_group(config)

    def _on_env_runners_recreated(self, *, env_runner_group, env_runner_indices) -> None:
        """Failed remote runners were replaced (weights and connector states already restored)."""
        self._callbacks("on_env_runners_recreated", algorithm=self, env_runner_group=env_runner_group,
                        env_runner_indices=env_runner_indices, is_evaluation=env_runner_group.config.in_evaluation)

    # -- RLlib's accessors ---------------------------------------------------------------------
    @property
    def env_runner(self):
        return self.env_runner_group.local_env_runner

    @property
    def eval_env_runner(self):
        """The local evaluation EnvRunner (None without evaluation, or when evaluation runs on remote ones only)."""
        group = self.eval_env_runner_group
        return None if group is None else group.local_env_runner

    @property
    def workers(self) -> "EnvRunnerGroup":
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
    def get_policy(self, policy_id: str = DEFAULT_MODULE_ID):
        """The local runner's Policy (Policy-based algorithms only); None for unknown IDs."""
        if self.learner_group is not None:
            raise ValueError(f"{type(self).__name__} runs RLModules, not Policies: use algo.get_module(module_id).")
        return self.env_runner_group.local_worker().get_policy(policy_id)

    def training_step(self) -> None:
        if self.learner_group is None:  # a Policy-based algorithm: one learn_on_batch per iteration
            from relayrl.policy.policy_algorithm import default_policy_training_step

            return default_policy_training_step(self)
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
        self._tell_runners_the_iteration(self.iteration + 1)
        with self.metrics.log_time(("timers", "training_iteration"), window=1):
            if parallel:
                calls, eval_results = self._train_with_parallel_evaluation(start, sampled_before, trained_before)
            else:
                calls = self._run_training_steps(start, sampled_before, trained_before)
        if getattr(self, "_policy_based", False):  # the old stack's observation filters (RLlib: once per iteration)
            self.env_runner_group.synchronize_filters()
        if evaluate_this_iter and not parallel:  # before the count, as RLlib 2.60 (and the parallel mode) do:
            eval_results = self.evaluate()        # evaluation hooks see `algorithm.iteration` = iterations done
        self.iteration += 1
        offline_interval = self.config.offline_evaluation_interval
        if offline_interval and self.iteration % offline_interval == 0:  # offline algorithms only (validated)
            eval_results = {**(eval_results or {}), **self.evaluate_offline()}
        elapsed = time.perf_counter() - start
        self._time_total_s += elapsed
        result = self._compile_result(elapsed, calls)
        if eval_results is not None:  # a copy: what callbacks change in this result is not carried on
            self._last_evaluation_results = copy.deepcopy(eval_results)
            result[EVALUATION_RESULTS] = eval_results
        elif self._last_evaluation_results is not None:  # as RLlib 2.60: the last evaluation's, until the next one
            result[EVALUATION_RESULTS] = copy.deepcopy(self._last_evaluation_results)
        add_policy_reward_mean(result)
        if self.config.legacy_result_keys:
            add_legacy_result_keys(result)
        self._callbacks("on_train_result", algorithm=self, metrics_logger=self.metrics, result=result)
        if self._result_logger is not None:
            self._result_logger.on_result(result)
        if self._tensorboard_videos is not None:
            self._tensorboard_videos.on_result(result)
        return result

    def _tell_runners_the_iteration(self, iteration: int) -> None:
        """The iteration starting now, for the runner that records videos (named in the files)."""
        group = getattr(self, "env_runner_group", None)
        if self.config.record_video_every_n_episodes and hasattr(group, "set_training_iteration"):
            group.set_training_iteration(iteration)

    def _run_training_steps(self, start, sampled_before, trained_before) -> int:
        calls = 0
        while True:
            with self.metrics.log_time(("timers", "training_step"), window=1):
                self.training_step()
            calls += 1
            if self._iteration_done(start, sampled_before, trained_before):
                return calls

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
        drop_untrained_modules_results(self.metrics, self.config)  # (e.g. a restored run's frozen policy's losses)
        result = self.metrics.reduce()
        result.pop(EVALUATION_RESULTS, None)  # train() attaches the evaluation's own results
        env_results = result.setdefault(ENV_RUNNER_RESULTS, {})
        for key in EPISODE_KEYS:
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
        self.log_sampled(runner_metrics, steps)
        return episodes, steps

    def log_sampled(self, runner_metrics: List[Dict[str, Any]], steps: int) -> None:
        """After a round of sampling: the runners' metrics into the results, the env steps into the counters."""
        self.metrics.merge_and_log_n_dicts(runner_metrics, key=ENV_RUNNER_RESULTS)
        if steps == 0:
            raise RuntimeError("Sampling returned no env steps this iteration; check the env and rollout settings.")
        self._counters[NUM_ENV_STEPS_SAMPLED_LIFETIME] = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0) + steps

    def update_learners(self, episodes, steps: int, *, batch=None) -> Dict[str, Any]:
        """One Learner update on `episodes` (or on a `batch` of train columns, e.g. the runners' own)."""
        timesteps = {NUM_ENV_STEPS_SAMPLED_LIFETIME: self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)}
        with self.metrics.log_time(("timers", "learner_update_timer"), window=1):
            results = self.learner_group.update(episodes=episodes, batch=batch, timesteps=timesteps)
        self.metrics.log_dict(results, key=LEARNER_RESULTS, window=1)
        self._counters[NUM_ENV_STEPS_TRAINED_LIFETIME] = self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0) + steps
        return results

    def sync_weights(self) -> None:
        with self.metrics.log_time(("timers", "synch_weights"), window=1):
            self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group)

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
        if getattr(self, "_policy_based", False):  # the Policy API: the policies' configs and optimizers
            from relayrl.policy.policy_reset_config import needs_rebuild

            if needs_rebuild(plan.config, plan.changed):
                return False
        self._apply_hyperparameters(plan.config, changed=plan.changed, previous=current)
        return True

    def _apply_hyperparameters(self, config, *, changed=None, previous=None) -> None:
        """Make `config` the algorithm's config; push it into the Learners and the changed options
        (`changed`, or all that differ from `previous`) into the EnvRunners' configs."""
        from relayrl.tune.reset_config import same_value

        previous = self.config if previous is None else previous
        if changed is None:
            changed = [o.name for o in type(config).options()
                       if not same_value(previous._values[o.name], config._values[o.name])]
        if getattr(self, "_policy_based", False):  # the Policy API: the policies' configs and optimizers
            from relayrl.policy.policy_reset_config import apply_policy_hyperparameters

            apply_policy_hyperparameters(self, config, changed)
            return
        self.config = config
        timestep = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        self.learner_group.config = config
        self.learner_group.foreach_learner(lambda learner: learner.apply_hyperparameters(config, timestep=timestep))
        logging.getLogger("relayrl").setLevel("WARNING" if config.log_level == "WARN" else config.log_level)
        self.env_runner_group.config = config
        _push_options_to_runners(self.env_runner_group, config, changed)
        if self.eval_env_runner_group is not None:
            eval_config = config.get_evaluation_config_object()
            self.eval_env_runner_group.config = eval_config
            _push_options_to_runners(self.eval_env_runner_group, eval_config, changed)

    # -- lifetime ---------------------------------------------------------------------------------
    # stop() (TrainableBase) runs cleanup(): directly, or through ray.tune.Trainable.stop under Tune.
    def cleanup(self) -> None:
        """Close envs and release learners; the algorithm is unusable afterwards."""
        self.env_runner_group.stop()
        if getattr(self, "eval_env_runner_group", None) is not None:
            self.eval_env_runner_group.stop()
        if self.learner_group is not None:
            self.learner_group.shutdown()
        close = getattr(getattr(self, "_result_logger", None), "close", None)
        if callable(close):
            close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _check_new_api_stack(config, algo_name: str) -> None:
    """config.api_stack(False, False) (RLlib's old stack) is honoured only for an old-stack Policy class."""
    if config.enable_rl_module_and_learner and config.enable_env_runner_and_connector_v2:
        return
    raise ValueError(
        f"config.api_stack(enable_rl_module_and_learner={config.enable_rl_module_and_learner}, "
        f"enable_env_runner_and_connector_v2={config.enable_env_runner_and_connector_v2}) asks for RLlib's old API "
        f"stack, but {algo_name} runs no old-stack Policy class. relayrl runs a Policy class given as "
        "PolicySpec(policy_class=...) in config.multi_agent(policies=...) or by an Algorithm's "
        "get_default_policy_class(config) (docs/policy_api.md); its built-in algorithms run on RLModules and "
        "Learners: drop the api_stack() call or pass True.")


def _defines_policy_class(cls) -> bool:
    return any("get_default_policy_class" in klass.__dict__ for klass in cls.__mro__ if klass is not Algorithm)


def _push_options_to_runners(group, config, changed) -> None:
    """Set the changed options on every EnvRunner's own config copy; recreate the envs if an option declared
    `remakes_env` changed (the runners keep their modules and connector states)."""
    updates = {name: config._values[name] for name in changed}
    if not updates:
        return
    table = type(config)._option_table
    remake_env = any(table[name].remakes_env for name in updates)

    def update(env_runner):
        env_runner.config._set_options(updates)
        if remake_env:
            env_runner.make_env()

    group.foreach_env_runner(update)
