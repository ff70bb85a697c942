"""Ray Tune search values inside a `DefaultModelConfig` (`DefaultModelConfig(use_lstm=tune.choice([True, False]))`).

Tune resolves search values only inside dicts and lists of the param space, never inside a dataclass (RLlib hands
its trials the unresolved marker). So `AlgorithmConfig.to_dict()` gives such a model config as a dict of the
fields the user passed, marked as a DefaultModelConfig; a trial's config turns the resolved dict back into
`DefaultModelConfig(**those fields)`. The trial's model is then what the DefaultModelConfig with that value gives:
the dataclass's values for the other fields (not the algorithm's dict defaults), and the defaults resolved for the
run (e.g. a stateful module's) for the fields the user left. Nothing here imports ray.
"""
import dataclasses
from typing import Any, Mapping

from relayrl.algorithms.options import is_search_space
from relayrl.modules.default_model_config import DefaultModelConfig, given_model_fields

MARK = "__default_model_config__"  # the dict stands for DefaultModelConfig(**its other keys)


def holds_search_space(model_config: Any) -> bool:
    """A dataclass model config with a Ray Tune search value in a field."""
    return (dataclasses.is_dataclass(model_config) and not isinstance(model_config, type)
            and any(is_search_space(getattr(model_config, f.name)) for f in dataclasses.fields(model_config)))


def model_config_for_tune(model_config: Any) -> Any:
    """`model_config` as to_dict() gives it: a dataclass with search values as a dict Tune resolves; else as is."""
    if not holds_search_space(model_config):
        return model_config
    fields = {name: getattr(model_config, name) for name in sorted(given_model_fields(model_config))}
    if type(model_config) is DefaultModelConfig:
        return {MARK: True, **fields}
    return fields  # another dataclass: all its fields (given_model_fields), as a plain dict


def model_config_from_tune(value: Any) -> Any:
    """A trial's model_config: the marked dict back as the DefaultModelConfig it stands for; else as is."""
    if isinstance(value, Mapping) and value.get(MARK) is True:
        return DefaultModelConfig(**{key: item for key, item in value.items() if key != MARK})
    return value
