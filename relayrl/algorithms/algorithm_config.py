"""AlgorithmConfig: RLlib's builder-style config, driven by one table of `Option` records.

Every option is declared once in `_OPTIONS` below; its builder method, attribute, value check,
dict key, aliases, CLI flag and docs are derived from that record (see options.py). A subclass
adds options with its own `_OPTIONS` and changes defaults with `_DEFAULTS`.
"""
from __future__ import annotations

import copy
import dataclasses
import importlib
import math
from typing import Any, Callable, Mapping, Optional, Union

from relayrl.algorithms.config_builders import ConfigBuildersMixin
from relayrl.algorithms.options import (
    BOOL,
    CALLABLE_OR_NONE,
    DICT,
    FRACTION,
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    Check,
    NotProvided,
    Option,
    OptionTable,
    either,
    is_int,
    is_search_space,
    one_of,
    optional,
    schedule_or,
    short_repr,
)
from relayrl.callbacks import CALLBACK_HOOKS, RLlibCallback
from relayrl.core.suggest import did_you_mean

__all__ = ["AlgorithmConfig", "NotProvided"]


def _is_space(value: Any) -> bool:
    # Checked by module name so that importing the config does not import gymnasium.
    return any(k.__module__.startswith("gymnasium.spaces") for k in type(value).__mro__)


_ENV = Check("a registered env id (str), a gymnasium.Env subclass, a callable env_config -> env, "
             "or None", lambda v: v is None or isinstance(v, str) or callable(v),
             Optional[Union[str, type, Callable]])
_SPACE = Check("a gymnasium space or None", lambda v: v is None or _is_space(v))
_CLIP_REWARDS = Check("None, a bool, or a positive float",
                      lambda v: v is None or BOOL.accepts(v) or POSITIVE_FLOAT.accepts(v),
                      Optional[Union[bool, float]])
_INT_OR_AUTO = either(POSITIVE_INT, one_of("auto"))
_MODEL_CONFIG = Check("a dict or a dataclass instance such as DefaultModelConfig(...)",
                      lambda v: isinstance(v, Mapping) or (dataclasses.is_dataclass(v)
                                                           and not isinstance(v, type)), dict)


def _is_callback_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, RLlibCallback)


_CALLBACKS_CLASS = Check("a RLlibCallback subclass or a list of them",
                         lambda v: _is_callback_class(v) or (isinstance(v, (list, tuple))
                                                             and all(map(_is_callback_class, v))),
                         Union[type, list])
_CALLBACK_FNS = Check("a callable, a list of callables, or None",
                      lambda v: v is None or callable(v) or (isinstance(v, (list, tuple))
                                                             and all(map(callable, v))),
                      Optional[Union[Callable, list]])
_SEED = optional(Check("an int >= 0", lambda v: is_int(v) and v >= 0, int))

_BASE_OPTIONS = (
    # environment()
    Option("env", None, "The env: a registered gymnasium id, a gymnasium.Env subclass, or a "
           "callable env_config -> env.", "environment", _ENV, positional=True),
    Option("env_config", {}, "Arguments for the env's constructor or creator.", "environment", DICT),
    Option("observation_space", None, "Observation space to use instead of the env's.",
           "environment", _SPACE, cli=False),
    Option("action_space", None, "Action space to use instead of the env's.", "environment",
           _SPACE, cli=False),
    Option("clip_rewards", None, "None: no clipping; True: clip to the reward's sign; c: clip to "
           "[-c, c].", "environment", _CLIP_REWARDS),
    Option("normalize_actions", True, "Map the module's actions from [-1, 1] to the env's Box "
           "bounds.", "environment", BOOL),
    Option("clip_actions", False, "Clip actions to the env's Box bounds before stepping.",
           "environment", BOOL),
    # env_runners()
    Option("num_env_runners", 0, "Remote EnvRunner actors (Ray); 0 samples in the driver process.",
           "env_runners", NON_NEGATIVE_INT, aliases=("num_rollout_workers", "num_workers")),
    Option("num_envs_per_env_runner", 1, "Vectorised envs each EnvRunner steps at once.",
           "env_runners", POSITIVE_INT, aliases=("num_envs_per_worker",)),
    Option("rollout_fragment_length", "auto", "Steps per env in each sample() call; 'auto' derives "
           "it from the train batch size.", "env_runners", _INT_OR_AUTO),
    Option("batch_mode", "truncate_episodes", "'truncate_episodes' cuts episodes at the fragment "
           "length; 'complete_episodes' finishes them.", "env_runners",
           one_of("truncate_episodes", "complete_episodes")),
    Option("env_to_module_connector", None, "Callable (env, spaces, device) -> ConnectorV2 or "
           "list, put before the default env-to-module pieces.", "env_runners", CALLABLE_OR_NONE,
           cli=False),
    Option("module_to_env_connector", None, "Callable (env, spaces) -> ConnectorV2 or list, put "
           "before the default module-to-env pieces.", "env_runners", CALLABLE_OR_NONE, cli=False),
    Option("add_default_connectors_to_env_to_module_pipeline", True, "Add relayrl's default "
           "env-to-module pieces.", "env_runners", BOOL),
    Option("add_default_connectors_to_module_to_env_pipeline", True, "Add relayrl's default "
           "module-to-env pieces.", "env_runners", BOOL),
    Option("episode_lookback_horizon", 1, "Past steps a cut episode keeps for connectors that look "
           "back.", "env_runners", NON_NEGATIVE_INT),
    Option("explore", True, "Sample actions stochastically (forward_exploration) instead of "
           "greedily.", "env_runners", BOOL),
    Option("exploration_config", {}, "{'type': name | Exploration subclass | 'pkg.mod:Class', **its "
           "kwargs}; {}: the algorithm's default (see get_default_exploration_config()).",
           "env_runners", DICT, cli=False),
    Option("gym_env_vectorize_mode", "SYNC", "'SYNC' steps the vector envs in this process, "
           "'ASYNC' in subprocesses (stored upper-case).", "env_runners",
           one_of("SYNC", "ASYNC", ignore_case=True)),
    Option("num_cpus_per_env_runner", 1, "CPUs Ray reserves for each remote EnvRunner actor "
           "(fractions allowed); also its torch thread count.", "env_runners", NON_NEGATIVE_FLOAT,
           aliases=("num_cpus_per_worker",)),
    Option("num_gpus_per_env_runner", 0, "GPUs Ray reserves for each remote EnvRunner actor.",
           "env_runners", NON_NEGATIVE_FLOAT, aliases=("num_gpus_per_worker",)),
    Option("custom_resources_per_env_runner", {}, "Custom Ray resources for each remote EnvRunner "
           "actor, e.g. {'spot': 1}.", "env_runners", DICT, aliases=("custom_resources_per_worker",)),
    Option("max_requests_in_flight_per_env_runner", 1, "Most unanswered calls per remote EnvRunner "
           "(foreach_env_runner_async).", "env_runners", POSITIVE_INT),
    Option("sample_timeout_s", 60.0, "Seconds to wait for a remote EnvRunner's sample(); a runner "
           "that takes longer counts as failed.", "env_runners", POSITIVE_FLOAT),
    # fault_tolerance()
    Option("restart_failed_env_runners", True, "Replace a crashed, hung or killed remote EnvRunner "
           "with a new actor (same worker_index); ignore_env_runner_failures is then moot.",
           "fault_tolerance", BOOL, aliases=("recreate_failed_env_runners", "recreate_failed_workers")),
    Option("ignore_env_runner_failures", False, "Without restarts: drop failed remote EnvRunners and "
           "go on with the others instead of raising.", "fault_tolerance", BOOL,
           aliases=("ignore_worker_failures",)),
    Option("max_num_env_runner_restarts", 1000, "Most EnvRunner restarts per group over the run.",
           "fault_tolerance", NON_NEGATIVE_INT, aliases=("max_num_worker_restarts",)),
    Option("delay_between_env_runner_restarts_s", 60.0, "Seconds between a failure and the restart "
           "(the other runners keep sampling meanwhile).", "fault_tolerance", NON_NEGATIVE_FLOAT,
           aliases=("delay_between_worker_restarts_s",)),
    Option("env_runner_health_probe_timeout_s", 30.0, "Seconds a new or probed EnvRunner actor may "
           "take to answer a ping.", "fault_tolerance", POSITIVE_FLOAT,
           aliases=("worker_health_probe_timeout_s",)),
    Option("env_runner_restore_timeout_s", 1800.0, "Seconds a restarted EnvRunner actor may take to "
           "be scheduled and built.", "fault_tolerance", POSITIVE_FLOAT,
           aliases=("worker_restore_timeout_s",)),
    Option("num_consecutive_env_runner_failures_tolerance", 100, "Failures in a row of one "
           "EnvRunner (no successful call between) before training raises.", "fault_tolerance",
           POSITIVE_INT, aliases=("num_consecutive_worker_failures_tolerance",)),
    Option("restart_failed_sub_environments", False, "A sub-env whose step() raises is recreated "
           "inside its EnvRunner (the runner's envs are rebuilt, ongoing episodes dropped) instead of "
           "failing the runner.",
           "fault_tolerance", BOOL),
    # learners() (the two connector options are also accepted by training(), as in RLlib)
    Option("num_learners", 0, "Remote Learner actors (Ray, DDP); 0 trains in the driver process.",
           "learners", NON_NEGATIVE_INT),
    Option("num_cpus_per_learner", "auto", "CPU threads torch may use for a Learner (and, in the "
           "driver, for sampling); 'auto': 1, which avoids oversubscribing small machines.",
           "learners", _INT_OR_AUTO),
    Option("num_gpus_per_learner", 0, "GPUs per remote Learner actor (fractions allowed); with a GPU on "
           "every Learner the actors all-reduce over NCCL instead of gloo.", "learners", NON_NEGATIVE_FLOAT),
    Option("learner_class", None, "A Learner subclass to use instead of the algorithm's default.",
           "learners", Check("a Learner subclass or None", lambda v: v is None or isinstance(v, type), type),
           cli=False),
    Option("learner_connector", None, "Callable (obs_space, act_space) -> ConnectorV2 or list, put "
           "before the default learner pieces.", "learners", CALLABLE_OR_NONE, also_in=("training",),
           cli=False),
    Option("add_default_connectors_to_learner_pipeline", True, "Add relayrl's default learner "
           "pieces.", "learners", BOOL, also_in=("training",)),
    # training()
    Option("gamma", 0.99, "Discount factor.", "training", FRACTION),
    Option("lr", 0.001, "Learning rate, or a schedule [[timestep, value], ...] interpolated "
           "linearly.", "training", schedule_or(POSITIVE_FLOAT, NON_NEGATIVE_FLOAT)),
    Option("train_batch_size_per_learner", None, "Timesteps per update per Learner; None: "
           "train_batch_size // max(num_learners, 1).", "training", optional(POSITIVE_INT)),
    Option("train_batch_size", 32, "Timesteps per update over all Learners (used when "
           "train_batch_size_per_learner is None).", "training", POSITIVE_INT),
    Option("minibatch_size", None, "Timesteps per SGD minibatch; None: the whole batch.",
           "training", optional(POSITIVE_INT), aliases=("sgd_minibatch_size",)),
    Option("num_epochs", 1, "Passes over each train batch.", "training", POSITIVE_INT,
           aliases=("num_sgd_iter",)),
    Option("shuffle_batch_per_epoch", False, "Shuffle the train batch before each epoch.",
           "training", BOOL, aliases=("shuffle_sequences",)),
    Option("grad_clip", None, "Clip gradients at this value (see grad_clip_by); None: no "
           "clipping.", "training", optional(POSITIVE_FLOAT)),
    Option("grad_clip_by", "global_norm", "'value': each element; 'norm': each tensor's norm; "
           "'global_norm': the norm over all tensors.", "training",
           one_of("value", "norm", "global_norm")),
    # rl_module()
    Option("model_config", {}, "Model settings: a dict or a DefaultModelConfig.", "rl_module",
           _MODEL_CONFIG, aliases=("model_config_dict",)),
    Option("rl_module_spec", None, "An RLModuleSpec (or MultiRLModuleSpec) replacing parts of the "
           "algorithm's default module.", "rl_module", None, cli=False),
    # reporting()
    Option("metrics_num_episodes_for_smoothing", 100, "Recent episodes that episode metrics "
           "average over.", "reporting", POSITIVE_INT),
    Option("min_time_s_per_iteration", None, "train() repeats training_step() for at least this "
           "many seconds.", "reporting", optional(NON_NEGATIVE_FLOAT)),
    Option("min_sample_timesteps_per_iteration", 0, "train() repeats training_step() until this "
           "many env steps were sampled.", "reporting", NON_NEGATIVE_INT),
    Option("min_train_timesteps_per_iteration", 0, "train() repeats training_step() until this "
           "many env steps were trained on.", "reporting", NON_NEGATIVE_INT),
    # evaluation()
    Option("evaluation_interval", None, "Evaluate every this many train() calls; None or 0: no "
           "evaluation.", "evaluation", optional(NON_NEGATIVE_INT)),
    Option("evaluation_duration", 10, "Episodes or timesteps (see evaluation_duration_unit) per "
           "evaluation, over all eval EnvRunners; 'auto' (parallel mode only): sample until the "
           "training step ends.", "evaluation", _INT_OR_AUTO),
    Option("evaluation_duration_unit", "episodes", "Unit of evaluation_duration: 'episodes' or "
           "'timesteps'.", "evaluation", one_of("episodes", "timesteps")),
    Option("evaluation_num_env_runners", 0, "Evaluation EnvRunners; 0 evaluates with one local "
           "runner. For now n > 0 creates n in-process runners (worker_index 1..n), not Ray actors.",
           "evaluation", NON_NEGATIVE_INT, aliases=("evaluation_num_workers",)),
    Option("evaluation_parallel_to_training", False, "Run evaluation in a thread during the "
           "training step, with the weights from before the step (results lag one iteration).",
           "evaluation", BOOL),
    Option("evaluation_config", None, "Config overrides for the eval EnvRunners, e.g. "
           "AlgorithmConfig.overrides(explore=False); dict values (env_config) are merged.",
           "evaluation", optional(DICT)),
    Option("custom_evaluation_function", None, "Callable (algo, eval_env_runner_group) -> metrics "
           "dict, run instead of the built-in evaluation.", "evaluation", CALLABLE_OR_NONE,
           cli=False),
    Option("evaluation_sample_timeout_s", 120.0, "Stop starting new evaluation sample() calls "
           "after this many seconds (in-process sample() calls are not interrupted).",
           "evaluation", POSITIVE_FLOAT),
    # debugging()
    Option("seed", None, "Seed for envs, modules and sampling (runners derive their own); None: "
           "random.", "debugging", _SEED),
    Option("log_level", "WARN", "Level of relayrl's loggers.", "debugging",
           one_of("DEBUG", "INFO", "WARN", "WARNING", "ERROR", ignore_case=True)),
    Option("logger_config", None, "Where train() results go: None or a dict with 'logdir' (default "
           "$RELAYRL_RESULTS_DIR or ~/relayrl_results, then <Algo>_<env>_<time>) and 'type' "
           "('json+tensorboard' (default), 'json', 'none').", "debugging", optional(DICT)),
    # checkpointing()
    Option("export_native_model_files", False, "Also write each RLModule's inference forward as TorchScript "
           "(native_models/<module_id>/model.pt) into every checkpoint.", "checkpointing", BOOL),
    Option("checkpoint_trainable_policies_only", False, "Store only the modules the Learner trains "
           "(should_module_be_updated) in checkpoints.", "checkpointing", BOOL),
    # callbacks()
    Option("callbacks_class", RLlibCallback, "A RLlibCallback subclass (or a list of them, run in "
           "order) whose overridden hooks are called.", "callbacks", _CALLBACKS_CLASS,
           key="callbacks", positional=True, cli=False),
    *(Option(hook, None, f"Callable(s) run on `{hook}` after the callbacks class's method, in "
             "list order.", "callbacks", _CALLBACK_FNS, key=f"callbacks_{hook}", cli=False)
      for hook in CALLBACK_HOOKS),
)

_BASE_GROUP_HELP = {
    "environment": "Sets the env and how its rewards and actions are treated.",
    "env_runners": "Sets how experience is sampled: EnvRunners, vector envs, fragments, "
                   "connectors.",
    "fault_tolerance": "Sets what happens when a remote EnvRunner crashes, hangs or is killed: "
                       "restart it, ignore it, or raise.",
    "learners": "Sets the Learners that update the module, and their connector pipeline.",
    "training": "Sets the training hyper-parameters.",
    "rl_module": "Sets the RLModule: a model config or a full RLModuleSpec.",
    "reporting": "Sets what one train() call covers and how metrics are smoothed.",
    "evaluation": "Sets evaluation during training: how often, how long, on which EnvRunners and "
                  "with which config overrides.",
    "debugging": "Sets the seed, the log level and where results are logged (logger_config).",
    "callbacks": "Sets the callbacks: a RLlibCallback subclass (or list) and per-event callables.",
    "checkpointing": "Sets what checkpoints hold besides the full state: TorchScript exports of the modules.",
}


def _copy_value(value: Any) -> Any:
    # Factories, classes and spaces are shared: copying them is useless or impossible.
    if callable(value) or _is_space(value):
        return value
    if isinstance(value, (list, tuple)) and value and all(map(callable, value)):
        return type(value)(value)  # e.g. a list of callbacks: new list, same callables
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


class _OptionAttribute:
    """Plain attribute access to an option (`config.lr`); writes are checked like builder args."""

    def __init__(self, option: Option):
        self.name = option.name
        self.__doc__ = option.help

    def __get__(self, config, owner=None):
        if config is None:
            return self
        return config._values[self.name]

    def __set__(self, config, value):
        config._set_options({self.name: value})


class AlgorithmConfig(ConfigBuildersMixin):
    """RLlib's AlgorithmConfig: chain builder calls, then build the algorithm.

    >>> config = PPOConfig().environment("CartPole-v1").training(lr=3e-4, num_epochs=6)
    """

    _OPTIONS = _BASE_OPTIONS
    _DEFAULTS: dict = {}
    _GROUP_HELP = _BASE_GROUP_HELP
    _DEFAULT_ALGO_CLASS: Optional[str] = None  # "module:Name", imported on first use
    _option_table: OptionTable  # set by _install_options for each class

    def __init__(self, algo_class=None):
        self._is_frozen = False
        self._in_evaluation = False
        self._algo_class = algo_class
        self._values = {o.name: _copy_value(o.default) for o in self._option_table}

    # -- the table ----------------------------------------------------------------------------

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._install_options()

    @classmethod
    def _install_options(cls) -> None:
        """Merge the option tables along the MRO; add attributes and (re)generate builders."""
        table = OptionTable()
        for klass in reversed(cls.__mro__):
            own = klass.__dict__
            if "_OPTIONS" in own or "_DEFAULTS" in own or "_GROUP_HELP" in own:
                table = table.extend(own.get("_OPTIONS", ()), own.get("_DEFAULTS"),
                                     own.get("_GROUP_HELP"))
        cls._option_table = table
        own = cls.__dict__
        for option in table:
            # An explicit property anywhere in the MRO (e.g. model_config) wins over the default.
            if not any(option.name in k.__dict__ for k in cls.__mro__):
                setattr(cls, option.name, _OptionAttribute(option))
        # Rebuild only builders whose options or defaults this class changed, so that a
        # hand-written builder in a parent class is not shadowed.
        changed = {g for o in own.get("_OPTIONS", ()) for g in o.groups}
        changed |= {g for name in own.get("_DEFAULTS", {}) for g in table[name].groups}
        if cls is AlgorithmConfig:
            changed = set(table.groups())
        for group in table.groups():
            if group in changed and group not in own:
                setattr(cls, group, table.make_builder(group, cls))

    @classmethod
    def options(cls) -> tuple:
        """All Option records of this config class (inherited first), with this class's defaults."""
        return cls._option_table.options()

    def _set_options(self, updates: Mapping) -> None:
        """Check every value, then set them all (so a bad value leaves the config unchanged)."""
        if self._is_frozen:
            names = ", ".join(f"`{n}`" for n in updates)
            raise AttributeError(f"Cannot set {names} on a frozen {type(self).__name__} (the "
                                 "algorithm uses it). Change a copy: config.copy(copy_frozen=False).")
        table = self._option_table
        checked = {name: table[name].check_value(value) for name, value in updates.items()}
        self._values.update(checked)

    # -- plain attributes ---------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or hasattr(getattr(type(self), name, None), "__set__"):
            object.__setattr__(self, name, value)  # private state, options and properties
            return
        table = self._option_table
        if table.is_alias(name):
            setattr(self, table.resolve(name, owner=type(self).__name__).name, value)
            return
        raise AttributeError(
            f"{type(self).__name__} has no option `{name}`.{did_you_mean(name, list(table._options))}"
            " (A subclass adds options by declaring Option records in its _OPTIONS.)")

    def __getattr__(self, name: str) -> Any:  # only called when normal lookup fails
        if not name.startswith("_"):
            table = type(self)._option_table
            if table.is_alias(name):
                return getattr(self, table.resolve(name, owner=type(self).__name__).name)
            hint = did_you_mean(name, list(table._options))
        else:
            hint = ""
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'.{hint}")

    def __getitem__(self, key: str) -> Any:
        """Old-stack dict access: config["lambda"], config["lr"]."""
        return getattr(self, self._option_table.resolve(key, owner=type(self).__name__).name)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    @property
    def train_batch_size_per_learner(self) -> int:
        """Timesteps per update per Learner (falls back to train_batch_size // num_learners)."""
        value = self._values["train_batch_size_per_learner"]
        if value is None:
            return self._values["train_batch_size"] // max(self._values["num_learners"], 1)
        return value

    @train_batch_size_per_learner.setter
    def train_batch_size_per_learner(self, value) -> None:
        self._set_options({"train_batch_size_per_learner": value})

    # An algorithm's own model defaults, merged under the user's model_config dict (RLlib's
    # "auto-includes"); a DefaultModelConfig instance is complete and taken as is.
    _MODEL_CONFIG_DEFAULTS: dict = {}

    @property
    def model_config(self) -> dict:
        """The model config as a plain dict (a DefaultModelConfig is converted)."""
        value = self._values["model_config"]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.asdict(value)
        return {**copy.deepcopy(self._MODEL_CONFIG_DEFAULTS), **(dict(value) if value is not None else {})}

    @model_config.setter
    def model_config(self, value) -> None:
        self._set_options({"model_config": value})

    @property
    def total_train_batch_size(self) -> int:
        return self.train_batch_size_per_learner * max(self.num_learners, 1)

    @property
    def is_multi_agent(self) -> bool:
        return False

    @property
    def algo_class(self):
        """The Algorithm class this config builds (a subclass's default is imported on first use)."""
        if self._algo_class is None and self._DEFAULT_ALGO_CLASS:
            module_name, _, class_name = self._DEFAULT_ALGO_CLASS.partition(":")
            self._algo_class = getattr(importlib.import_module(module_name), class_name)
        return self._algo_class

    @algo_class.setter
    def algo_class(self, value) -> None:
        self._algo_class = value

    def get_default_exploration_config(self) -> dict:
        """The exploration an empty `exploration_config` means; algorithms override (DQN: EpsilonGreedy)."""
        return {"type": "StochasticSampling"}

    def get_rollout_fragment_length(self, worker_index: int = 0) -> int:
        """Steps per env per sample() for one EnvRunner (index 0: local, 1..n: remote).

        With "auto", the train batch is split over all runners' envs; when it does not divide
        evenly, the first runners step one more time each so the sum covers the batch.
        """
        if self.rollout_fragment_length != "auto":
            return self.rollout_fragment_length
        envs = self.num_envs_per_env_runner
        runners = max(self.num_env_runners, 1)
        base, missing = divmod(self.total_train_batch_size, envs * runners)
        runners_with_extra = -(-missing // envs)  # ceil: one extra step gives `envs` timesteps
        index = max(worker_index, 1)  # the local runner samples like the first one
        return base + 1 if index <= runners_with_extra else base

    @property
    def in_evaluation(self) -> bool:
        """True on the config copy the evaluation EnvRunners use (see get_evaluation_config_object)."""
        return self.__dict__.get("_in_evaluation", False)

    @in_evaluation.setter
    def in_evaluation(self, value) -> None:
        self._in_evaluation = bool(value)

    def get_evaluation_config_object(self) -> "AlgorithmConfig":
        """An unfrozen copy for the evaluation EnvRunners: `evaluation_config` applied (dict values
        such as env_config merged into the current ones), in_evaluation=True,
        num_env_runners=evaluation_num_env_runners, and complete episodes when the unit is episodes."""
        config = self.copy(copy_frozen=False)
        overrides = dict(self.evaluation_config or {})
        table = self._option_table
        updates = table.collect(overrides, owner=type(self).__name__)
        for name, value in list(updates.items()):
            current = config._values[name]
            if isinstance(value, Mapping) and isinstance(current, Mapping):
                # As RLlib: an exploration_config with another "type" replaces the old one (no kwargs merged).
                if name == "exploration_config" and value.get("type", current.get("type")) != current.get("type"):
                    continue
                updates[name] = {**current, **value}
        # Settings that only make sense on the main config are not inherited by the eval copy.
        updates.setdefault("evaluation_interval", None)
        updates.setdefault("evaluation_config", None)
        updates["num_env_runners"] = self.evaluation_num_env_runners
        if self.evaluation_duration_unit == "episodes" and "batch_mode" not in overrides:
            updates["batch_mode"] = "complete_episodes"
        config._set_options(updates)
        config.in_evaluation = True
        return config

    # -- dicts ----------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """{option key: value} for every option, flat, as RLlib's to_dict ("lambda" for lambda_)."""
        return {o.dict_key: _copy_value(self._values[o.name]) for o in self._option_table}

    def update_from_dict(self, config_dict: Mapping) -> "AlgorithmConfig":
        """Set options from a flat dict (keys from to_dict() or aliases); unknown keys raise."""
        self._set_options(self._option_table.collect(config_dict, owner=type(self).__name__))
        return self

    @classmethod
    def from_dict(cls, config_dict: Mapping) -> "AlgorithmConfig":
        return cls().update_from_dict(config_dict)

    @classmethod
    def overrides(cls, **kwargs) -> dict:
        """A checked {option key: value} dict of overrides, e.g. for evaluation_config."""
        table = cls._option_table
        updates = table.collect(kwargs, owner=cls.__name__)
        return {table[name].dict_key: table[name].check_value(v) for name, v in updates.items()}

    # -- lifecycle ------------------------------------------------------------------------------

    def copy(self, copy_frozen: Optional[bool] = None) -> "AlgorithmConfig":
        """A deep copy; frozen like this one unless copy_frozen says otherwise."""
        new = object.__new__(type(self))
        for name, value in self.__dict__.items():
            if name == "_values":
                value = {n: _copy_value(v) for n, v in value.items()}
            elif name != "_algo_class":
                value = _copy_value(value)
            object.__setattr__(new, name, value)
        if copy_frozen is not None:
            new._is_frozen = bool(copy_frozen)
        return new

    def freeze(self) -> None:
        """Forbid further changes (the built algorithm relies on these values)."""
        self._is_frozen = True

    def validate(self) -> None:
        """Raise ValueError for anything that would fail later; call before building."""
        self._validate_values()
        if self.env is None and (self.observation_space is None or self.action_space is None):
            raise ValueError("no environment set: call config.environment('CartPole-v1') or "
                             "config.environment(MyEnvClass) (or set observation_space and "
                             "action_space)")
        self._validate_batch_sizes()
        self._validate_evaluation()
        from relayrl.algorithms.result_logger import check_logger_config

        check_logger_config(self.logger_config)

    def _validate_evaluation(self) -> None:
        if self.evaluation_duration == "auto" and not self.evaluation_parallel_to_training:
            raise ValueError("evaluation_duration='auto' requires evaluation_parallel_to_training=True "
                             "(it means: evaluate for as long as the parallel training step runs); set "
                             "an int evaluation_duration or config.evaluation("
                             "evaluation_parallel_to_training=True)")
        if self.evaluation_config:
            # Unknown keys and bad values raise here rather than when the algorithm is built.
            self.overrides(**dict(self.evaluation_config))

    def _validate_values(self) -> None:
        # Re-check everything: attributes may have been mutated in place since they were set.
        for option in self._option_table:
            value = self._values[option.name]
            if is_search_space(value):
                raise ValueError(
                    f"{option.name} is still a Ray Tune search space ({short_repr(value)}): Tune "
                    "picks a value per trial, so pass the config to Tune (e.g. "
                    "Tuner(PPO, param_space=config)) instead of building it directly")
            self._values[option.name] = option.check_value(value)

    def _validate_batch_sizes(self) -> None:
        per_learner = self.train_batch_size_per_learner
        if per_learner <= 0:
            raise ValueError(f"train_batch_size ({self.train_batch_size}) // num_learners "
                             f"({self.num_learners}) is 0: raise train_batch_size or set "
                             "train_batch_size_per_learner")
        if self.minibatch_size is not None and self.minibatch_size > per_learner:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= "
                             f"train_batch_size_per_learner ({per_learner})")

    def _validate_fragment_vs_batch(self) -> None:
        """On-policy algorithms: an int rollout_fragment_length must fit the train batch."""
        fragment = self.rollout_fragment_length
        if fragment == "auto":
            return
        envs, runners = self.num_envs_per_env_runner, max(self.num_env_runners, 1)
        per_round = fragment * envs * runners
        total = self.total_train_batch_size
        sampled = math.ceil(total / per_round) * per_round
        if per_round > total or sampled - total > 0.1 * total:
            raise ValueError(
                f"rollout_fragment_length ({fragment}) x num_envs_per_env_runner ({envs}) x "
                f"max(num_env_runners, 1) ({runners}) = {per_round} steps per sampling round "
                f"does not fit the train batch of {total} steps (it would sample {sampled}); "
                "set rollout_fragment_length='auto' or a divisor of the batch")

    def __repr__(self) -> str:
        changed = []
        for option in self._option_table:
            value = self._values[option.name]
            try:
                same = bool(value == option.default)
            except Exception:
                same = False
            if not same:
                changed.append(f"{option.name}={short_repr(value, 40)}")
        return f"{type(self).__name__}({', '.join(changed)})"


AlgorithmConfig._install_options()
