"""RLlib's `ray.rllib.algorithms.iql.torch.default_iql_torch_rl_module`, for code ported by changing imports (names in relayrl/compat_paths.py).

Generated from relayrl/compat_paths.py (its main()); do not edit.
"""
from relayrl.compat_paths import exports

__getattr__, __dir__, __all__ = exports(__name__)
