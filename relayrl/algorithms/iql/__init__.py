"""IQL (RLlib's new API stack): implicit Q-learning from offline data, on SAC's networks plus a value network.

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("IQL")
