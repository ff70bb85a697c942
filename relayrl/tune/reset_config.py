"""What `Algorithm.reset_config(new_config)` may change in place, and the new config it yields.

Tune's PBT (and `reuse_actors=True`) hands a running algorithm a new config; rebuilding the
algorithm for every perturbation wastes the trial's setup time. Options declared `mutable=True`
(their `Option` record, relayrl/algorithms/) are applied in place; a change to any other option
(model, env, number of runners, ...) needs a rebuild, so reset_config refuses it and changes nothing.
"""
import logging
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple

from relayrl.tune.trainable_base import split_tune_entries

logger = logging.getLogger("relayrl")


@dataclass
class ConfigReset:
    config: Any  # the new AlgorithmConfig, validated and frozen
    changed: Tuple[str, ...]  # option names whose value differs from the current config


def same_value(a: Any, b: Any, _depth: int = 0) -> bool:
    """Equality that survives a pickle round trip: Tune ships configs to trial actors with
    cloudpickle, which recreates functions defined in scripts and tests as new objects."""
    if a is b:
        return True
    if _depth > 20:  # e.g. a recursive closure: it refers to itself
        return False
    if callable(a) and callable(b) and not (isinstance(a, type) or isinstance(b, type)):
        code_a, code_b = getattr(a, "__code__", None), getattr(b, "__code__", None)
        if code_a is not None and code_b is not None:
            return (a.__qualname__ == b.__qualname__ and code_a.co_code == code_b.co_code
                    and code_a.co_consts == code_b.co_consts
                    and same_value(_closure_values(a), _closure_values(b), _depth + 1))
    if isinstance(a, type) and isinstance(b, type):
        return a is b or (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], _depth + 1) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y, _depth + 1) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _closure_values(function) -> list:
    values = []
    for cell in getattr(function, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            values.append(None)
    return values


def plan_config_reset(algorithm, current, new_config) -> Optional[ConfigReset]:
    """The new config and the changed options, or None if a change needs a rebuild.

    `new_config`: an AlgorithmConfig or a dict of option keys (all of to_dict() or some; Tune's
    private `__trial_info__`-style entries are ignored). Unknown keys or invalid values raise.
    """
    if isinstance(new_config, Mapping):
        updates, _ = split_tune_entries(dict(new_config))
        config = current.copy(copy_frozen=False).update_from_dict(updates)
    elif hasattr(new_config, "to_dict"):
        config = new_config.copy(copy_frozen=False)
    else:
        raise TypeError(f"reset_config() takes an AlgorithmConfig or a dict, got {type(new_config).__name__}")
    from relayrl.algorithms.resolved_defaults import forget_resolved_defaults

    forget_resolved_defaults(config)  # (the current config's resolved values: resolved afresh for the new one)
    algorithm._resolve_defaults(config)  # as when it was built: a Tune trial's dict holds the unresolved defaults
    changed = tuple(o.name for o in type(config).options()
                    if not same_value(current._values[o.name], config._values[o.name]))
    mutable = type(config)._option_table.mutable_names()
    needs_rebuild = [name for name in changed if name not in mutable]
    if needs_rebuild:
        logger.info("reset_config: %s changed, which needs a rebuild; nothing was changed",
                    ", ".join(needs_rebuild))
        return None
    config.validate()
    config.freeze()
    return ConfigReset(config=config, changed=changed)
