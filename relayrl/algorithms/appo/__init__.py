"""APPO (RLlib's new API stack): IMPALA's asynchronous data flow with a clipped surrogate and a target policy.

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("APPO")
