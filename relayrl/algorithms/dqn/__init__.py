"""DQN (RLlib's new API stack): config, default Q-module, learner (loss) and algorithm (training_step).

Importing this package imports no torch; the classes load on first use.
"""
import importlib

_LAZY = {
    "DQN": "relayrl.algorithms.dqn.dqn",
    "DQNConfig": "relayrl.algorithms.dqn.dqn_config",
    "DQNLearner": "relayrl.algorithms.dqn.dqn_learner",
    "DefaultDQNTorchRLModule": "relayrl.algorithms.dqn.default_dqn_rl_module",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'relayrl.algorithms.dqn' has no attribute '{name}'")
    return getattr(importlib.import_module(_LAZY[name]), name)
