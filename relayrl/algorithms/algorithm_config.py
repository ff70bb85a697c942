"""AlgorithmConfig: RLlib's builder-style config, driven by one table of `Option` records.

Every option is declared once as an `Option` record (this class's own in base_options.py); its
builder method, attribute, value check, dict key, aliases, CLI flag and docs are derived from that
record (see options.py). A subclass adds options with its own `_OPTIONS` and changes defaults with
`_DEFAULTS`.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any, Mapping, Optional

from relayrl.algorithms.base_options import BASE_GROUP_HELP, BASE_OPTIONS
from relayrl.algorithms.legacy_keys import BASE_LEGACY_KEYS
from relayrl.algorithms.config_builders import ConfigBuildersMixin
from relayrl.algorithms.config_validation import ConfigValidationMixin
from relayrl.algorithms.env_config_merge import deep_merged
from relayrl.algorithms.multi_agent_options import MULTI_AGENT_GROUP_HELP, MULTI_AGENT_OPTIONS
from relayrl.algorithms.offline_evaluation_options import OFFLINE_EVALUATION_OPTIONS
from relayrl.algorithms.offline_options import OFFLINE_GROUP_HELP, OFFLINE_OPTIONS
from relayrl.algorithms.options import (
    NotProvided,
    Option,
    OptionTable,
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


class AlgorithmConfig(ConfigBuildersMixin, ConfigValidationMixin):
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

    def _set_options(self, updates: Mapping, *, given: bool = True, merge_dicts: bool = False) -> None:
        """Check every value, then set them all (so a bad value leaves the config unchanged).

        `given`: the user chose them (a default resolved when the algorithm is built never replaces such a
        value; relayrl/algorithms/resolved_defaults.py); False for values relayrl picks itself. `merge_dicts`
        (builders, update_from_dict): a dict for an option that `merges_dicts` (env_config) is merged into the
        current one at every depth, as RLlib's builders do."""
        if self._is_frozen:
            names = ", ".join(f"`{n}`" for n in updates)
            raise AttributeError(f"Cannot set {names} on a frozen {type(self).__name__} (the "
                                 "algorithm uses it). Change a copy: config.copy(copy_frozen=False).")
        table = self._option_table
        if merge_dicts:
            updates = {name: deep_merged(self._values[name], value) if table[name].merges_dicts and isinstance(
                value, Mapping) and isinstance(self._values.get(name), Mapping) else value
                for name, value in updates.items()}
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
        merged into the current ones, env_config at every depth as RLlib does), in_evaluation=True,
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
                updates[name] = (deep_merged(current, value) if self._option_table[name].merges_dicts
                                 else {**current, **value})
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
        """{option key: value} for every option, flat, as RLlib's to_dict ("lambda" for lambda_).

        A DefaultModelConfig holding Ray Tune search values comes as a dict, which Tune resolves
        (relayrl/tune/model_config_search.py)."""
        from relayrl.tune.model_config_search import model_config_for_tune

        values = {o.dict_key: _copy_value(self._values[o.name]) for o in self._option_table}
        values["model_config"] = model_config_for_tune(values["model_config"])
        return values

    def update_from_dict(self, config_dict: Mapping) -> "AlgorithmConfig":
        """Set options from a flat dict (keys from to_dict() or aliases); unknown keys raise.

        Keys count as set by the user (`is_given`), except in a dict of every option (what to_dict() gives, e.g. a
        Tune trial's config), which cannot say which were chosen: there only values other than the defaults do."""
        from relayrl.tune.reset_config import same_value

        updates = self._option_table.collect(config_dict, owner=type(self).__name__)
        self._set_options(updates, given=False, merge_dicts=True)
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
