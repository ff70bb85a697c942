"""IMPALA (RLlib's new API stack): asynchronous EnvRunners, a learner thread and V-trace.

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("IMPALA")
