"""An env_config given to `environment()` / `update_from_dict`, or in `evaluation_config`, over the current one,
merged at every depth as RLlib 2.60 merges it (`deep_update`): `{"level": {"size": 10}}` over
`{"level": {"size": 5, "walls": 2}}` keeps `walls`."""
from collections.abc import Mapping
from typing import Any, Dict


def deep_merged(base: Mapping, override: Mapping) -> Dict[str, Any]:
    """A new dict: `base` with `override`'s keys set, where both hold a mapping merged key by key (recursively);
    any other value (a list, an object) replaces the old one as it is."""
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        merged[key] = deep_merged(current, value) if isinstance(current, Mapping) and isinstance(
            value, Mapping) else value
    return merged
