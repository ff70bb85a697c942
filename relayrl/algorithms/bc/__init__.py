"""BC (RLlib's new API stack): behaviour cloning of logged actions from offline data (MARWIL with beta = 0).

Importing this package imports no torch; the classes load on first use.
"""
from relayrl.algorithms.registry import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("BC")
