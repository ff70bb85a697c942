"""DQN (RLlib's new API stack): config, default Q-module, learner (loss) and algorithm (training_step).

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("DQN")
