"""Framework-free basics shared by every layer: column names, schedules, space helpers.

RLlib's `ray.rllib.core` names (Columns, DEFAULT_MODULE_ID, the COMPONENT_* checkpoint part names) load from
here too (relayrl/compat_paths.py).
"""
from relayrl.compat_paths import exports

__getattr__, __dir__, __all__ = exports(__name__)
