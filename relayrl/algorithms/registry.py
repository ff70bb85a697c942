"""Algorithm names -> config classes, imported lazily (so listing them imports no torch).

Adding an algorithm to the command line is one line in `ALGORITHMS`.
"""
from __future__ import annotations

import importlib

from relayrl.core.suggest import did_you_mean

__all__ = ["ALGORITHMS", "algorithm_names", "canonical_name", "get_config_class"]

# name -> "module:ConfigClass"
ALGORITHMS = {
    "PPO": "relayrl.algorithms.ppo.ppo_config:PPOConfig",
    "DQN": "relayrl.algorithms.dqn.dqn_config:DQNConfig",
    "SAC": "relayrl.algorithms.sac.sac_config:SACConfig",
}


def algorithm_names() -> list:
    return list(ALGORITHMS)


def canonical_name(name: str) -> str:
    """The registered spelling of `name` (case-insensitive); ValueError with a hint if unknown."""
    if name in ALGORITHMS:
        return name
    for known in ALGORITHMS:
        if known.lower() == str(name).lower():
            return known
    raise ValueError(f"unknown algorithm `{name}`.{did_you_mean(str(name).upper(), ALGORITHMS)} "
                     f"Available: {', '.join(ALGORITHMS)}.")


def get_config_class(name: str) -> type:
    """The config class of algorithm `name`, e.g. get_config_class("PPO") -> PPOConfig."""
    module_name, _, class_name = ALGORITHMS[canonical_name(name)].partition(":")
    return getattr(importlib.import_module(module_name), class_name)
