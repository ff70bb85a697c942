"""RLlib's numpy helpers (`ray.rllib.utils.numpy`) that ported code uses: conversions and small math."""
import sys
from typing import Any

import numpy as np

SMALL_NUMBER = 1e-6
LARGE_INTEGER = 100_000_000
MIN_LOG_NN_OUTPUT = -5
MAX_LOG_NN_OUTPUT = 2


def convert_to_numpy(x: Any, reduce_type: bool = True) -> Any:
    """`x` (a tensor, or a nested dict/list/tuple of them) with every torch tensor as a numpy array (detached, on the
    CPU). `reduce_type`: float64 arrays become float32 (as torch's default dtype)."""
    if isinstance(x, dict):
        return {k: convert_to_numpy(v, reduce_type) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(convert_to_numpy(v, reduce_type) for v in x)
    torch = sys.modules.get("torch")  # a tensor exists only if torch was imported
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if reduce_type and isinstance(x, np.ndarray) and x.dtype == np.float64:
        x = x.astype(np.float32)
    return x


def softmax(x, axis: int = -1, epsilon: float = None) -> np.ndarray:
    """Softmax along `axis`, computed stably; `epsilon`: the smallest probability returned."""
    x = np.asarray(x)
    exp = np.exp(x - np.max(x, axis=axis, keepdims=True))
    probs = exp / np.sum(exp, axis=axis, keepdims=True)
    return probs if epsilon is None else np.maximum(probs, epsilon)


def one_hot(x, depth: int = 0, on_value: float = 1.0, off_value: float = 0.0, dtype=np.float32) -> np.ndarray:
    """Integer array -> one-hot rows along a new last axis (`depth` 0: max(x) + 1)."""
    x = np.asarray(x, dtype=np.int64)
    depth = depth or int(x.max()) + 1
    out = np.full(x.shape + (depth,), off_value, dtype=dtype)
    np.put_along_axis(out, x[..., None], on_value, axis=-1)
    return out


def sigmoid(x, derivative: bool = False) -> np.ndarray:
    s = 1.0 / (1.0 + np.exp(-np.asarray(x)))
    return s * (1 - s) if derivative else s


def relu(x, alpha: float = 0.0) -> np.ndarray:
    """max(x, alpha * x): ReLU, or leaky ReLU with `alpha`."""
    x = np.asarray(x)
    return np.maximum(x, x * alpha)


def huber_loss(x, delta: float = 1.0) -> np.ndarray:
    x = np.asarray(x)
    return np.where(np.abs(x) < delta, 0.5 * x ** 2, delta * (np.abs(x) - 0.5 * delta))


def l2_loss(x) -> float:
    return float(np.sum(np.square(x)) / 2.0)


__all__ = ["LARGE_INTEGER", "MAX_LOG_NN_OUTPUT", "MIN_LOG_NN_OUTPUT", "SMALL_NUMBER", "convert_to_numpy",
           "huber_loss", "l2_loss", "one_hot", "relu", "sigmoid", "softmax"]
