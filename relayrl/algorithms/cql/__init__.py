"""CQL (RLlib's new API stack): conservative Q-learning from offline data, on SAC's module and Learner.

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("CQL")
