"""The old stack's policy config dict, checked as strictly as the new stack's config (the template policies'
constructor runs these before anything is built):

- every key is one the policy knows: its defaults (POLICY_DEFAULT_CONFIG and the template's
  get_default_config()), an algorithm option (the algorithm hands its whole config to its policies) or a
  `_`-prefixed internal switch; anything else is a ValueError with a did-you-mean. A template that declares no
  settings of its own (no get_default_config) also takes the keys of the algorithm's `policy_config` option
  (`extra_keys`) as its own; one that declares them takes only those (so PPO's `clip_parm` is named);
- a value whose key is an algorithm option passes that option's check (lr="x" is named, with what it must be);
- `model`: only the keys the old stack's models read (catalog.MODEL_DEFAULTS), each of its type;
- both spaces are gymnasium spaces.
"""
from typing import Any, Iterable, Mapping

import gymnasium as gym

from relayrl.core.suggest import did_you_mean
from relayrl.policy.models.catalog import MODEL_DEFAULTS


class PolicyConfig(dict):
    """A policy's config dict as an algorithm builds it: `extra_keys` came from its `policy_config` option."""

    extra_keys: frozenset = frozenset()


def check_policy_spaces(policy_name: str, observation_space: Any, action_space: Any) -> None:
    for what, space in (("observation", observation_space), ("action", action_space)):
        if not isinstance(space, gym.Space):
            raise TypeError(f"{policy_name}({what}_space={space!r}, ...): a policy needs the env's {what} space, a "
                            f"gymnasium space such as gymnasium.spaces.Box(-1.0, 1.0, (4,)); for an env, pass "
                            f"env.{what}_space (an algorithm passes its env's).")


def check_policy_config(policy_name: str, config: Mapping, defaults: Mapping, declares_own_keys: bool) -> None:
    """`config`: what the caller gave the policy (before `defaults`, the policy's keys, are filled in);
    `declares_own_keys`: the template has a get_default_config()."""
    if not isinstance(config, Mapping):
        raise TypeError(f"{policy_name}(..., config={config!r}): the config is a dict of settings.")
    options = _algorithm_options()
    known = set(defaults) | set(options)
    extra = frozenset() if declares_own_keys else getattr(config, "extra_keys", frozenset())
    for key in config:
        if not isinstance(key, str):
            raise ValueError(f"{policy_name}: config key {key!r} is not a string.")
        if key in known or key in extra or key.startswith("_"):
            continue
        raise ValueError(f"{policy_name}: unknown config key `{key}`.{did_you_mean(key, known)} A policy takes "
                         "its own keys (the template's get_default_config()), the common ones (gamma, lr, lambda, "
                         "model, ...) and the algorithm's options; declare a setting of your own with "
                         "build_policy_class(..., get_default_config=lambda: {'my_key': default}).")
    for key, value in config.items():
        option = options.get(key)
        if option is not None and key != "model":
            try:
                option.check_value(value)
            except ValueError as error:
                raise ValueError(f"{policy_name}: config[{key!r}]: {error}.") from None
    if "model" in config:
        check_policy_model(policy_name, config["model"])


def check_policy_model(policy_name: str, model: Any) -> None:
    from relayrl.modules.default_model_config import check_model_config_values

    if model is None:
        return
    if not isinstance(model, Mapping):
        raise ValueError(f"{policy_name}: config['model'] must be a dict of model settings (fcnet_hiddens, ...), "
                         f"got {model!r}.")
    known = set(MODEL_DEFAULTS)
    for key in model:
        if key not in known and not str(key).startswith("_"):
            raise ValueError(f"{policy_name}: unknown model key `{key}`.{did_you_mean(str(key), known)} The old "
                             f"stack's models read {', '.join(sorted(known))}; a custom model takes its own "
                             "settings in custom_model_config.")
    check_model_config_values(model, name="model", fix="config['model'] = {{'{key}': {example}, ...}}")
    for key in ("custom_model", "custom_action_dist"):
        value = model.get(key)
        if value is not None and not isinstance(value, (str, type)):
            raise ValueError(f"{policy_name}: model['{key}'] must be None, a registered name or a class, got "
                             f"{value!r}.")
    if not isinstance(model.get("custom_model_config", {}), Mapping):
        raise ValueError(f"{policy_name}: model['custom_model_config'] must be a dict, got "
                         f"{model['custom_model_config']!r}.")


def _algorithm_options() -> dict:
    """{dict key, option name or alias: Option (None: an old key with no option of its own)} over the Policy
    API's config and every other AlgorithmConfig class defined in this process (an algorithm hands its policies
    its whole config); the Policy API's own checks first (e.g. its framework may be 'tf2')."""
    from relayrl.algorithms.algorithm_config import AlgorithmConfig
    from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig

    options, seen = {}, set()
    for cls in (PolicyAlgorithmConfig, *_subclasses(AlgorithmConfig)):
        table = cls._option_table
        if id(table) in seen:
            continue
        seen.add(id(table))
        for option in table:
            for word in (option.name, option.dict_key, *option.aliases):
                options.setdefault(word, option)
        for key in table.legacy:
            options.setdefault(key, None)
    return options


def _subclasses(cls) -> Iterable[type]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _subclasses(sub)
