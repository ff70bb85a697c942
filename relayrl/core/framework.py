"""RLlib's framework import helpers (`ray.rllib.utils.framework`). relayrl's RLModules and Learners are torch;
TensorFlow (the `tf` extra) serves TF policies (build_tf_policy)."""
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


def try_import_tf(error: bool = False) -> Tuple[Any, Any, Any]:
    """RLlib's `(tf1, tf, tf_version)`: (tf.compat.v1, tf, 2) with TensorFlow installed (`pip install
    "relayrl[tf]"`), else (None, None, None) (or ImportError with error=True)."""
    try:
        import tensorflow as tf
    except ImportError:
        if error:
            raise ImportError("TensorFlow is not installed: pip install 'relayrl[tf]' (TF policies only; "
                              "relayrl's RLModules and Learners are torch).") from None
        return None, None, None
    return tf.compat.v1, tf, 2
