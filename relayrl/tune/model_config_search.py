"""Ray Tune search values inside a `DefaultModelConfig` (`DefaultModelConfig(use_lstm=tune.choice([True, False]))`).

Tune resolves search values only inside dicts and lists of the param space, never inside a dataclass (RLlib hands
its trials the unresolved marker). So `AlgorithmConfig.to_dict()` gives such a model config as a dict: the fields
the user passed, plus the algorithm's own model defaults' keys at the dataclass's values (a DefaultModelConfig is
taken as is, without the algorithm's defaults under it). A trial's config then builds from the resolved dict as
it would from the DefaultModelConfig with that value. Nothing here imports ray.
"""
import dataclasses
from typing import Any, Mapping

from relayrl.algorithms.options import is_search_space
from relayrl.modules.default_model_config import given_model_fields


def holds_search_space(model_config: Any) -> bool:
    """A dataclass model config with a Ray Tune search value in a field."""
    return (dataclasses.is_dataclass(model_config) and not isinstance(model_config, type)
            and any(is_search_space(getattr(model_config, f.name)) for f in dataclasses.fields(model_config)))


def model_config_for_tune(model_config: Any, algorithm_defaults: Mapping) -> Any:
    """`model_config` as to_dict() gives it: a dataclass with search values as a dict Tune resolves; else as is."""
    if not holds_search_space(model_config):
        return model_config
    keys = set(given_model_fields(model_config)) | {key for key in algorithm_defaults
                                                    if hasattr(model_config, key)}
    return {f.name: getattr(model_config, f.name) for f in dataclasses.fields(model_config) if f.name in keys}
