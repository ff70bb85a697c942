"""RLlib's framework import helpers (`ray.rllib.utils.framework`): relayrl is torch only."""
from typing import Any, Tuple


def try_import_torch(error: bool = False) -> Tuple[Any, Any]:
    """`(torch, torch.nn)`, as RLlib's; (None, None) if torch is missing (or ImportError with error=True)."""
    try:
        import torch
        import torch.nn as nn
    except ImportError:
        if error:
            raise
        return None, None
    return torch, nn


def try_import_tf(error: bool = False) -> Tuple[None, None, None]:
    """RLlib's `(tf1, tf, tf_version)`: relayrl never uses TensorFlow, so always (None, None, None)."""
    if error:
        raise ImportError("relayrl's modules and Learners are torch-only: it does not use TensorFlow.")
    return None, None, None
