"""SAC (RLlib's new API stack) for Box and Discrete actions: config, default module, learner, algorithm.

Importing this package imports no torch; the classes load on first use.
"""
import importlib

_LAZY = {
    "SAC": "relayrl.algorithms.sac.sac",
    "SACConfig": "relayrl.algorithms.sac.sac_config",
    "SACLearner": "relayrl.algorithms.sac.sac_learner",
    "DefaultSACTorchRLModule": "relayrl.algorithms.sac.default_sac_rl_module",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'relayrl.algorithms.sac' has no attribute '{name}'")
    return getattr(importlib.import_module(_LAZY[name]), name)
