"""SAC (RLlib's new API stack) for Box and Discrete actions: config, default module, learner, algorithm.

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("SAC")
