"""AlgorithmConfig: RLlib's builder-style config, driven by one table of `Option` records.

Every option is declared once as an `Option` record (this class's own in base_options.py); its
builder method, attribute, value check, dict key, aliases, CLI flag and docs are derived from that
record (see options.py). A subclass adds options with its own `_OPTIONS` and changes defaults with
`_DEFAULTS`.
"""
from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any, Mapping, Optional

from relayrl.algorithms.base_options import BASE_GROUP_HELP, BASE_OPTIONS
from relayrl.algorithms.legacy_keys import BASE_LEGACY_KEYS
from relayrl.algorithms.config_builders import ConfigBuildersMixin
from relayrl.algorithms.multi_agent_options import MULTI_AGENT_GROUP_HELP, MULTI_AGENT_OPTIONS
from relayrl.algorithms.offline_evaluation_options import OFFLINE_EVALUATION_OPTIONS, check_offline_evaluation_values
from relayrl.algorithms.offline_options import OFFLINE_GROUP_HELP, OFFLINE_OPTIONS, check_offline_values
from relayrl.algorithms.options import (
    NotProvided,
    Option,
    OptionTable,
    is_search_space,
    short_repr,
)
from relayrl.core.spaces import is_space
from relayrl.core.suggest import did_you_mean

__all__ = ["AlgorithmConfig", "NotProvided"]


def _copy_value(value: Any) -> Any:
    # Factories, classes and spaces are shared: copying them is useless or impossible.
    if callable(value) or is_space(value):
        return value
    if isinstance(value, (list, tuple)) and value and all(map(callable, value)):
        return type(value)(value)  # e.g. a list of callbacks: new list, same callables
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _own_plain_data(value: Any) -> Any:
    """A private copy of lists/dicts of plain data, so a config never aliases the caller's containers
    (e.g. `RLLIB_DQN_DEFAULTS["epsilon"]`); anything holding other objects is kept as given."""
    if isinstance(value, (list, dict)) and _is_plain_data(value):
        return copy.deepcopy(value)
    return value


def _is_plain_data(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(map(_is_plain_data, value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain_data(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, str))


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

    SUPPORTS_MULTI_AGENT = False  # whether the algorithm trains on multi-agent episodes (all built-in ones do)

    _checkpoint_kind = "algorithm config"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    _OPTIONS = BASE_OPTIONS + MULTI_AGENT_OPTIONS + OFFLINE_OPTIONS + OFFLINE_EVALUATION_OPTIONS
    _DEFAULTS: dict = {}
    _OPTION_CHANGES: dict = {}  # {inherited option: {field: value}}, e.g. {"tau": {"mutable": True}}
    _GROUP_HELP = {**BASE_GROUP_HELP, **MULTI_AGENT_GROUP_HELP, **OFFLINE_GROUP_HELP}
    _LEGACY_KEYS = BASE_LEGACY_KEYS  # old RLlib dict keys with no option of their own (legacy_keys.py)
    _option_table: OptionTable  # set by _install_options for each class

    def __init__(self, algo_class=None):
        self._is_frozen = False
        self._in_evaluation = False
        self._algo_class = algo_class
        self._values = {o.name: _copy_value(o.default) for o in self._option_table}
        self._given: set = set()  # options the user set (builders, attributes, dicts): resolved defaults keep out

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
            if any(k in own for k in ("_OPTIONS", "_DEFAULTS", "_GROUP_HELP", "_OPTION_CHANGES", "_LEGACY_KEYS")):
                table = table.extend(own.get("_OPTIONS", ()), own.get("_DEFAULTS"), own.get("_GROUP_HELP"),
                                     own.get("_OPTION_CHANGES"), own.get("_LEGACY_KEYS", ()))
        cls._option_table = table
        own = cls.__dict__
        for option in table:
            # An explicit property anywhere in the MRO (e.g. model_config) wins over the default.
            if not any(option.name in k.__dict__ for k in cls.__mro__):
                setattr(cls, option.name, _OptionAttribute(option))
        # Rebuild only builders whose options or defaults this class changed, so that a
        # hand-written builder in a parent class is not shadowed.
        changed = {g for o in own.get("_OPTIONS", ()) for g in o.groups}
        changed |= {g for name in [*own.get("_DEFAULTS", {}), *own.get("_OPTION_CHANGES", {})] for g in table[name].groups}
        if cls is AlgorithmConfig:
            changed = set(table.groups())
        for group in table.groups():
            if group in changed and group not in own:
                setattr(cls, group, table.make_builder(group, cls))

    @classmethod
    def options(cls) -> tuple:
        """All Option records of this config class (inherited first), with this class's defaults."""
        return cls._option_table.options()

    def _set_options(self, updates: Mapping, *, given: bool = True) -> None:
        """Check every value, then set them all (so a bad value leaves the config unchanged).

        `given`: the user chose them (a default resolved when the algorithm is built never replaces such a
        value; relayrl/algorithms/resolved_defaults.py); False for values relayrl picks itself."""
        if self._is_frozen:
            names = ", ".join(f"`{n}`" for n in updates)
            raise AttributeError(f"Cannot set {names} on a frozen {type(self).__name__} (the "
                                 "algorithm uses it). Change a copy: config.copy(copy_frozen=False).")
        table = self._option_table
        checked = {name: _own_plain_data(table[name].check_value(value)) for name, value in updates.items()}
        self._values.update(checked)
        if given:
            self.__dict__.setdefault("_given", set()).update(checked)
            self.__dict__.get("_given_by_a_run", set()).difference_update(checked)  # chosen again: the user's
            if "model_config" in checked:  # a new model config of the user's: its own fields are the given ones
                self.__dict__.pop("_all_model_fields_given", None)

    def is_given(self, name: str) -> bool:
        """Whether the user set option `name` (by a builder, an attribute or a dict), so that no default resolved
        for the run (e.g. for a stateful module) replaces it."""
        return self._option_table.resolve(name, owner=type(self).__name__).name in self.__dict__.get("_given", ())

    def chosen_by_user(self, name: str) -> bool:
        """is_given, except for values that came whole from a run (a checkpoint's config, a dict of every option):
        those may be defaults resolved for that run, which a check refusing a user's choice must take as the run
        took them (e.g. the MeanStdFilter a stateful module gets, which skips images)."""
        name = self._option_table.resolve(name, owner=type(self).__name__).name
        return self.is_given(name) and name not in self.__dict__.get("_given_by_a_run", ())

    def mark_given(self, names=None) -> None:
        """Count `names` (all options when None) as set by the user, e.g. a config restored from a checkpoint,
        whose values are the ones its run trained with. With None every model_config field counts too, also those
        a dict left to the defaults: the run built its module with today's value of each, not a later default's."""
        self.__dict__.setdefault("_given", set()).update(self._values if names is None else names)
        if names is None:
            self.__dict__["_all_model_fields_given"] = True
            self.__dict__["_given_by_a_run"] = set(self._values)

    def given_model_fields(self) -> frozenset:
        """The model_config fields the user chose (a default resolved for the run replaces only the others): a
        dict's keys or the fields passed to DefaultModelConfig; every field after mark_given()."""
        from relayrl.modules.default_model_config import DefaultModelConfig, given_model_fields

        if self.__dict__.get("_all_model_fields_given"):
            return frozenset(self.model_config) | {field.name for field in dataclasses.fields(DefaultModelConfig)}
        return given_model_fields(self._values["model_config"])

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
        """Old-stack dict access: config["lambda"], config["lr"], config["in_evaluation"]."""
        if key == "in_evaluation":  # a flag of the evaluation copy, not an option (RLlib's policy_config key)
            return self.in_evaluation
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

    # Defaults for image observations, between the algorithm's and the user's: one CNN shared by the policy
    # and the value function, as RLlib's Atari examples and SB3's CnnPolicy do (PPO on Pong: 1.6x faster updates).
    _IMAGE_MODEL_CONFIG_DEFAULTS: dict = {"vf_share_layers": True}

    def model_config_for(self, observation_space) -> dict:
        """`model_config` for a module seeing `observation_space` (image defaults added for images)."""
        from relayrl.modules.encoders import is_image_space

        value = self._values["model_config"]
        if not is_image_space(observation_space) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            return self.model_config
        return {**copy.deepcopy(self._MODEL_CONFIG_DEFAULTS), **self._IMAGE_MODEL_CONFIG_DEFAULTS,
                **(dict(value) if value is not None else {})}

    @model_config.setter
    def model_config(self, value) -> None:
        self._set_options({"model_config": value})

    @property
    def total_train_batch_size(self) -> int:
        return self.train_batch_size_per_learner * max(self.num_learners, 1)

    @property
    def is_multi_agent(self) -> bool:
        """Whether `config.multi_agent(policies=...)` set the modules (then the EnvRunners step MultiAgentEnvs)."""
        return self.policies is not None

    @property
    def is_atari(self) -> bool:
        """Whether the env is an ALE Atari game given by its gymnasium id (`ALE/Pong-v5`, `ale_py:ALE/Pong-v5`);
        False for env classes and registered names (RLlib's property)."""
        from relayrl.env.wrappers.atari_wrappers import is_atari_id

        env = self.env
        return isinstance(env, str) and is_atari_id(env.split(":", 1)[-1])

    @property
    def agent_to_module_mapping_fn(self):
        """`policy_mapping_fn`, checked: an unknown module id raises, naming it and the known ones."""
        from relayrl.algorithms.multi_agent_mapping import checked_mapping_fn

        return checked_mapping_fn(self.policy_mapping_fn, self.policies)

    @property
    def algo_class(self):
        """The Algorithm class this config builds (the registered one for this config class, imported on first use)."""
        if self._algo_class is None:
            from relayrl.algorithms.registry import algorithm_class_for_config

            self._algo_class = algorithm_class_for_config(type(self))
        return self._algo_class

    @algo_class.setter
    def algo_class(self, value) -> None:
        self._algo_class = value

    # What a stateful default module (use_lstm=True) learns with, measured (docs/stateful_modules.md), applied where
    # the user set nothing (relayrl/algorithms/resolved_defaults/stateful_module.py): options, model_config fields,
    # and for on-policy fragments the fragment length (max_seq_len then covers a fragment and its bootstrap step)
    # and the whole sequences per minibatch (None: minibatch_size is left alone).
    _STATEFUL_DEFAULTS: dict = {}
    _STATEFUL_MODEL_DEFAULTS: dict = {}
    _STATEFUL_FRAGMENT: Optional[int] = None
    _STATEFUL_SEQUENCES_PER_MINIBATCH: Optional[int] = None

    def stateful_module_defaults(self) -> tuple:
        """(options, model_config fields) the algorithm's default modules learn with when they are stateful."""
        from relayrl.algorithms.resolved_defaults.stateful_module import with_matched_sequences

        return with_matched_sequences(self, dict(self._STATEFUL_DEFAULTS), dict(self._STATEFUL_MODEL_DEFAULTS))

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
            if name == "rl_module_spec":
                from relayrl.modules.rl_module_spec import spec_with_overrides

                updates[name] = spec_with_overrides(current, value)
            elif isinstance(value, Mapping) and isinstance(current, Mapping):
                # As RLlib: an exploration_config with another "type" replaces the old one (no kwargs merged).
                if name == "exploration_config" and value.get("type", current.get("type")) != current.get("type"):
                    continue
                updates[name] = {**current, **value}
        own_keys = () if updates.get("env_runner_cls", self.env_runner_cls) is self.env_runner_cls else getattr(
            self.env_runner_cls, "OWN_ENV_CONFIG_KEYS", ())  # (the external-env server's port: not the eval env's)
        if own_keys:
            mine = dict(overrides.get("env_config") or {})
            updates["env_config"] = {k: v for k, v in updates.get("env_config", self.env_config).items()
                                     if k not in own_keys or k in mine}
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
        """Set options from a flat dict (keys from to_dict() or aliases); unknown keys raise.

        Keys count as set by the user (`is_given`), except in a dict of every option (what to_dict() gives, e.g. a
        Tune trial's config), which cannot say which were chosen: there only values other than the defaults do."""
        from relayrl.tune.reset_config import same_value

        updates = self._option_table.collect(config_dict, owner=type(self).__name__)
        self._set_options(updates, given=False)
        every_option = set(updates) == set(self._values)
        table = self._option_table
        given = {name for name, value in updates.items()
                 if not every_option or not same_value(value, table[name].default)}
        self.__dict__.setdefault("_given", set()).update(given)
        by_a_run = self.__dict__.setdefault("_given_by_a_run", set())  # (see chosen_by_user)
        if every_option:
            by_a_run.update(given)
        else:
            by_a_run.difference_update(given)
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
        self._validate_multi_agent()
        self._validate_evaluation()
        if self.soft_horizon and self.horizon is None:
            raise ValueError("soft_horizon=True needs a horizon: config.env_runners(horizon=N, soft_horizon=True)")
        self._validate_model_and_exploration()
        self._validate_offline()
        from relayrl.algorithms.result_logger import check_logger_config

        check_logger_config(self.logger_config)

    def _validate_multi_agent(self) -> None:
        if not self.is_multi_agent:
            return
        if not self.SUPPORTS_MULTI_AGENT:
            name = type(self).__name__.replace("Config", "")
            if self.TRAINS_ONE_MODULE_OFFLINE:
                from relayrl.algorithms.offline_multi_agent import offline_module_id

                offline_module_id(self)  # one trained module, which the single-agent rows train
            elif self.READS_OFFLINE_DATA:
                raise ValueError(f"{name} trains one single-agent module from offline data: multi-agent offline "
                                 "input (config.multi_agent(policies=...)) is not supported yet. Train one module "
                                 "per agent with a single-agent config, each from its agent's rows (recordings "
                                 "name them in the `module_id` column).")
            else:
                raise ValueError(f"{name} does not train multi-agent configs (config.multi_agent(policies=...)) "
                                 "yet; use one of relayrl's algorithms (PPO, IMPALA, APPO, DQN, SAC), or a "
                                 "single-agent env.")
        self._validate_policy_spec_configs()
        to_train = self.policies_to_train
        if to_train is not None and not callable(to_train):
            unknown = [m for m in to_train if m not in self.policies]
            if unknown:
                raise ValueError(f"policies_to_train names {unknown}, which are not among the policies "
                                 f"{list(self.policies)}.")

    # Whether a PolicySpec's `config` sets its policy's settings (the Policy API's algorithms).
    APPLIES_POLICY_SPEC_CONFIG = False

    def _validate_policy_spec_configs(self) -> None:
        """An RLModule policy's PolicySpec(config={...}) would be ignored (one set of settings trains every module):
        refuse it rather than train with other settings than the user asked for."""
        from relayrl.algorithms.config_builders import _is_old_stack_policy

        if self.APPLIES_POLICY_SPEC_CONFIG:
            return
        for module_id, spec in self.policies.items():
            if spec.config and not _is_old_stack_policy(spec.policy_class):
                raise ValueError(
                    f"policies[{module_id!r}] = PolicySpec(config={spec.config!r}): {type(self).__name__} trains "
                    "every RLModule policy with the algorithm's settings, so per-policy settings would be ignored. "
                    "Drop config= (set the values with config.training(...) for all policies); give a policy its own "
                    "model with config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"
                    f"{module_id!r}: RLModuleSpec(model_config={{...}})}})).")

    # Whether the algorithm trains from offline data (`input_`): BC, MARWIL, CQL, IQL set it.
    READS_OFFLINE_DATA = False
    # Whether, under config.multi_agent(...), the single-agent rows train its one trained module (BC, MARWIL).
    TRAINS_ONE_MODULE_OFFLINE = False

    @property
    def is_offline(self) -> bool:
        """Whether this config trains from offline files (`input_` is not 'sampler'; RLlib's property)."""
        from relayrl.algorithms.offline_options import is_offline_input

        return is_offline_input(self.input_)

    def _validate_offline(self) -> None:
        check_offline_values(self)
        name = type(self).__name__.replace("Config", "")
        check_offline_evaluation_values(self, name)
        if self.is_offline and not self.READS_OFFLINE_DATA:
            raise ValueError(f"{name} samples from its env and does not train from offline data (input_="
                             f"{self.input_!r}): use BC, MARWIL, CQL or IQL for offline files, or keep "
                             "input_='sampler' (record with config.offline_data(output=...)).")
        if self.READS_OFFLINE_DATA and not self.is_offline:
            raise ValueError(f"{name} trains from offline data: set config.offline_data(input_=[...paths of "
                             "parquet files or folders...]) (command line: --input DIR; docs/offline.md).")
        evaluation_env = self.env if self.env is not None else (self.evaluation_config or {}).get("env")
        if self.READS_OFFLINE_DATA and self.evaluation_interval and evaluation_env is None:
            raise ValueError(f"{name} evaluates in an env (evaluation_interval={self.evaluation_interval}), but "
                             "none is set: config.environment('CartPole-v1') (the env gives the spaces too), "
                             "evaluation_config={'env': ...}, or no evaluation.")

    def _validate_evaluation(self) -> None:
        if self.evaluation_duration == "auto" and not self.evaluation_parallel_to_training:
            raise ValueError("evaluation_duration='auto' requires evaluation_parallel_to_training=True "
                             "(it means: evaluate for as long as the parallel training step runs); set "
                             "an int evaluation_duration or config.evaluation("
                             "evaluation_parallel_to_training=True)")
        if self.evaluation_config:
            # Unknown keys and bad values raise here rather than when the algorithm is built.
            self.overrides(**dict(self.evaluation_config))

    def _validate_model_and_exploration(self) -> None:
        """Bad model_config / exploration_config values raise here, naming the key, not deep in torch later."""
        from relayrl.exploration.make_exploration import check_exploration_config
        from relayrl.modules.default_model_config import check_model_config_values

        check_model_config_values(self.model_config)
        check_exploration_config(self.exploration_config, default=self.get_default_exploration_config())

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
