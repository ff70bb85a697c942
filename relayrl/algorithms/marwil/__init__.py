"""MARWIL (RLlib's new API stack): advantage-weighted imitation of logged actions, trained from offline data.

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("MARWIL")
