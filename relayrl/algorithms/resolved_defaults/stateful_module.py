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

from relayrl.modules.default_model_config import given_model_fields


def apply_stateful_module_defaults(config) -> Optional[str]:
    """Apply the config's stateful-module defaults where the user set nothing; the line that says so, or None."""
    from relayrl.tune.reset_config import same_value

    raw_model = config._values["model_config"]
    if not config.model_config.get("use_lstm"):
        return None
    options, model_fields = config.stateful_module_defaults()
    options = {name: value for name, value in options.items()
               if not config.is_given(name) and not same_value(config._values[name], value)}
    users = given_model_fields(raw_model) - config.__dict__.get("_resolved_model_fields", frozenset())
    current = config.model_config
    model_fields = {key: value for key, value in model_fields.items()
                    if key not in users and not same_value(current.get(key), value)}
    if not options and not model_fields:
        return None
    if model_fields:
        options["model_config"] = _with_fields(raw_model, model_fields)
        config.__dict__["_resolved_model_fields"] = \
            config.__dict__.get("_resolved_model_fields", frozenset()) | frozenset(model_fields)
    config._set_options(options, given=False)  # (a model_config the user gave stays given)
    said = [f"{name}={value!r}" for name, value in options.items() if name != "model_config"]
    said += [f"model_config {key}={value!r}" for key, value in model_fields.items()]
    algo = type(config).__name__.replace("Config", "")
    return (f"{algo} with a stateful module (use_lstm=True) uses the defaults measured for it: {', '.join(said)} "
            "(docs/stateful_modules.md; a value you set is kept)")


def _with_fields(raw_model, fields: dict):
    """`raw_model` with `fields` filled in: a new dict, or a copy of the DefaultModelConfig that keeps the record of
    which fields the user passed."""
    if raw_model is None or isinstance(raw_model, dict):
        return {**(raw_model or {}), **fields}
    new = dataclasses.replace(raw_model, **fields)
    if "_given_fields" in raw_model.__dict__:
        object.__setattr__(new, "_given_fields", set(raw_model.__dict__["_given_fields"]))
    return new
