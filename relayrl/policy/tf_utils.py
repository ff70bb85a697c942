"""RLlib's `utils/tf_utils.py` helpers that TF losses and stats use (seed 001's kl_and_loss_stats)."""
import tensorflow as tf


def explained_variance(y, pred):
    """1 - Var(y - pred) / Var(y), at least -1 (RLlib's definition)."""
    _, y_var = tf.nn.moments(y, axes=[0])
    _, diff_var = tf.nn.moments(y - pred, axes=[0])
    return tf.maximum(-1.0, 1.0 - diff_var / y_var)


__all__ = ["explained_variance"]
