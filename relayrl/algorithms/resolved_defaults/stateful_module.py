"""Defaults for a stateful module (`use_lstm=True`): what depends on sequences, chosen by measurement.

An LSTM trains on whole sequences, so the settings a feed-forward module learns well with (e.g. PPO's minibatches of
64 steps: three sequences) starve it. Each algorithm's config says which values its default modules learn with
when they are stateful (`AlgorithmConfig.stateful_module_defaults()`: options and model_config fields, measured over
seeds and tasks, docs/stateful_modules.md). They replace only the values the user did not set
(`AlgorithmConfig.is_given`; for model_config, the keys of their dict or the fields they passed to
DefaultModelConfig), so anything the user sets wins.
"""
import dataclasses
from typing import Optional

from relayrl.modules.default_model_config import DefaultModelConfig, given_model_fields


def apply_stateful_module_defaults(config) -> Optional[str]:
    """Apply the config's stateful-module defaults where the user set nothing; the line that says so, or None."""
    from relayrl.tune.reset_config import same_value

    raw_model = config._values["model_config"]
    if not config.model_config.get("use_lstm"):
        return _stateful_only_in_module_specs(config)
    options, model_fields = config.stateful_module_defaults()
    options = {name: value for name, value in options.items()
               if not config.is_given(name) and not same_value(config._values[name], value)}
    users = config.given_model_fields() - set(config.__dict__.get("_resolved_model_fields", {}))
    current = config.model_config
    model_fields = {key: value for key, value in model_fields.items()
                    if key not in users and not same_value(current.get(key), value)}
    if not options and not model_fields:
        return None
    if model_fields:
        options["model_config"] = _with_fields(raw_model, model_fields)
        config.__dict__["_resolved_model_fields"] = {**config.__dict__.get("_resolved_model_fields", {}),
                                                     **model_fields}  # {field: the value resolved}
    config._set_options(options, given=False)  # (a model_config the user gave stays given)
    said = [f"{name}={value!r}" for name, value in options.items() if name != "model_config"]
    said += [f"model_config {key}={value!r}" for key, value in model_fields.items()]
    algo = type(config).__name__.replace("Config", "")
    return (f"{algo} with a stateful module (use_lstm=True) uses the defaults measured for it: {', '.join(said)} "
            "(docs/stateful_modules.md; a value you set is kept)")


def forget_stateful_module_defaults(config) -> None:
    """Put back the defaults where an earlier build resolved values (a config copied from a built algorithm), so
    that they are resolved afresh for the config as it is now: its envs, batch or use_lstm may have changed. A
    non-default value nobody set was resolved (a value the user sets, a checkpoint's or a dict's of every option
    counts as given); resolving an unchanged config gives the same values again."""
    from relayrl.tune.reset_config import same_value

    table = config._option_table
    options = {name: table[name].default for name in sorted(_sequence_options(config)) if not config.is_given(name)
               and not same_value(config._values[name], table[name].default)}
    resolved = config.__dict__.pop("_resolved_model_fields", {})
    raw_model = config._values["model_config"]
    current = config.model_config
    # A field the user passed in a model_config given since (e.g. head_fcnet_hiddens=[64] with use_lstm=False) is
    # theirs, even where it equals the value resolved, unless that model_config holds every resolved value: a
    # copy of the resolved one (`{**config.model_config, "use_lstm": False}`, the built config left as it was).
    passed = given_model_fields(raw_model)
    whole_copy = all(key in passed and same_value(current.get(key), value) for key, value in resolved.items())
    fields = {key for key, value in resolved.items()
              if key in current and same_value(current.get(key), value) and (whole_copy or key not in passed)}
    if isinstance(raw_model, dict) and fields & set(raw_model):
        options["model_config"] = {key: value for key, value in raw_model.items() if key not in fields}
    elif fields and dataclasses.is_dataclass(raw_model):
        defaults = DefaultModelConfig()
        options["model_config"] = _with_fields(raw_model, {key: getattr(defaults, key) for key in fields
                                                           if hasattr(defaults, key)})
    if options:
        config._set_options(options, given=False)  # (a model_config the user gave stays given)


def _stateful_only_in_module_specs(config) -> Optional[str]:
    """The line saying the defaults do not apply where only an RLModuleSpec's model_config says use_lstm=True (it
    replaces config.model_config for its module, so model fields set on the config would not reach it, and the
    options, e.g. the learning rate, are the whole run's, other modules' too), or None."""
    spec = config.rl_module_spec
    specs = dict(getattr(spec, "rl_module_specs", None) or {})
    if spec is not None and not specs:
        specs = {"the module": spec}
    stateful = sorted(str(module_id) for module_id, module_spec in specs.items()
                      if _says_use_lstm(getattr(module_spec, "model_config", None)))
    if not stateful or any(config.is_given(name) for name in _sequence_options(config)):
        return None  # (a user who set the sequence settings needs no hint)
    algo = type(config).__name__.replace("Config", "")
    return (f"{algo}: the RLModuleSpec of {', '.join(stateful)} sets use_lstm=True in its own model_config, so the "
            f"defaults measured for stateful modules are not applied: they apply with "
            f"config.rl_module(model_config={{'use_lstm': True}}). The feed-forward defaults starve an LSTM (short "
            f"sequences, few per minibatch): set the sequence settings yourself (docs/stateful_modules.md)")


def _sequence_options(config) -> set:
    """The config's options a stateful module's defaults resolve (what depends on sequences)."""
    return {*type(config)._STATEFUL_DEFAULTS, "rollout_fragment_length", "minibatch_size"} & set(config._values)


def _says_use_lstm(model_config) -> bool:
    if isinstance(model_config, dict):
        return bool(model_config.get("use_lstm"))
    return bool(getattr(model_config, "use_lstm", False))


def _with_fields(raw_model, fields: dict):
    """`raw_model` with `fields` filled in: a new dict, or a copy of the DefaultModelConfig that keeps the record of
    which fields the user passed."""
    if raw_model is None or isinstance(raw_model, dict):
        return {**(raw_model or {}), **fields}
    new = dataclasses.replace(raw_model, **fields)
    if "_given_fields" in raw_model.__dict__:
        object.__setattr__(new, "_given_fields", set(raw_model.__dict__["_given_fields"]))
    return new


def with_matched_sequences(config, options: dict, model_fields: dict) -> tuple:
    """`options` and `model_fields` plus the sequence settings matched to each other where the user left them
    (the config's _STATEFUL_FRAGMENT, _STATEFUL_SEQUENCES_PER_MINIBATCH): one fragment and its bootstrap step make
    one sequence (max_seq_len = rollout_fragment_length + 1), whichever of the two the user set, and a minibatch
    holds whole sequences."""
    if _users_batch(config):  # (train_batch_size_per_learner replaces train_batch_size: saying it would mislead)
        options.pop("train_batch_size", None)
    fragment = type(config)._STATEFUL_FRAGMENT
    if fragment is None:
        return options, model_fields
    if "train_batch_size" in options and config.is_given("rollout_fragment_length") and \
            not _fits(config, {"train_batch_size": options["train_batch_size"]}):
        options.pop("train_batch_size")  # the user's fragments need the default batch (e.g. 256 steps x 8 envs)
    user_model = config.given_model_fields() - set(config.__dict__.get("_resolved_model_fields", {}))
    user_fragment = config.is_given("rollout_fragment_length")
    if "max_seq_len" in user_model:
        seq_len = config.model_config.get("max_seq_len", DefaultModelConfig.max_seq_len)  # (a dict may leave it)
        if not user_fragment:
            options["rollout_fragment_length"] = max(1, seq_len - 1)
    elif user_fragment:
        if config.rollout_fragment_length == "auto":
            return options, model_fields  # sequences of RLlib's max_seq_len
        seq_len = model_fields["max_seq_len"] = config.rollout_fragment_length + 1
    else:
        fragment = _fitting_fragment(config, options, fragment)
        options["rollout_fragment_length"] = fragment
        seq_len = model_fields["max_seq_len"] = fragment + 1
    per_minibatch = type(config)._STATEFUL_SEQUENCES_PER_MINIBATCH
    if per_minibatch and not config.is_given("minibatch_size"):
        batch = config.train_batch_size_per_learner if "train_batch_size" not in options else \
            options["train_batch_size"] // max(config.num_learners, 1)
        options["minibatch_size"] = max(1, min(per_minibatch, batch // seq_len)) * seq_len
    if not _fits(config, options):  # e.g. a small train batch of the user's: keep their sampling as it was
        options.pop("rollout_fragment_length", None)
        options.pop("minibatch_size", None)
        model_fields.pop("max_seq_len", None)
        if not _fits(config, options):  # (the user's sampling fits the default batch only)
            options.pop("train_batch_size", None)
    return options, model_fields


def _fitting_fragment(config, options: dict, fragment: int) -> int:
    """The measured fragment, or the longest down to half of it that fits the train batch: e.g. 6 envs step 192
    steps a round with fragments of 32, which overshoot a 1,024-step batch by 12.5% (the config refuses over 10%),
    and 186 with 31. Without it the sequence settings would all be dropped (RLlib's max_seq_len of 20, minibatches
    of 64 steps: three sequences) for a mere number of envs."""
    for length in range(fragment, max(1, fragment // 2) - 1, -1):
        if _fits(config, {**options, "rollout_fragment_length": length}):
            return length
    return fragment  # (then nothing fits: with_matched_sequences keeps the user's sampling)


def _users_batch(config) -> bool:
    """Whether the user chose the train batch (train_batch_size, or train_batch_size_per_learner, which wins)."""
    per_learner = config.is_given("train_batch_size_per_learner") and \
        config._values["train_batch_size_per_learner"] is not None
    return per_learner or config.is_given("train_batch_size")


def _fits(config, options: dict) -> bool:
    """Whether `options` on top of `config` still pass the config's checks (fragments fitting the train batch)."""
    trial = config.copy(copy_frozen=False)
    trial._set_options({k: v for k, v in options.items() if not config.is_given(k)}, given=False)
    try:
        trial.validate()
    except ValueError:
        return False
    return True
