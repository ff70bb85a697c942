"""TF action distributions over a model's outputs (RLlib's `models/tf/tf_action_dist.py`).

The same interface and formulas as torch_action_dist.py: `dist_class(inputs, model)`; `sample()`,
`deterministic_sample()`, `logp(actions)`, `sampled_action_logp()`, `entropy()`, `kl(other)`.
"""
import gymnasium as gym
import numpy as np
import tensorflow as tf


class TFActionDistribution:
    def __init__(self, inputs, model=None):
        self.inputs = tf.convert_to_tensor(inputs)
        self.model = model
        self.last_sample = None

    def sampled_action_logp(self):
        return self.logp(self.last_sample)

    @staticmethod
    def required_model_output_shape(action_space, model_config) -> int:
        raise NotImplementedError


class Categorical(TFActionDistribution):
    """Discrete actions from logits."""

    def __init__(self, inputs, model=None, temperature: float = 1.0):
        super().__init__(inputs, model)
        self.log_probs = tf.nn.log_softmax(self.inputs / temperature, axis=-1)

    def sample(self):
        self.last_sample = tf.squeeze(tf.random.categorical(self.log_probs, 1), -1)
        return self.last_sample

    def deterministic_sample(self):
        self.last_sample = tf.argmax(self.log_probs, axis=-1)
        return self.last_sample

    def logp(self, actions):
        actions = tf.cast(actions, tf.int32)
        return tf.gather(self.log_probs, actions, axis=-1, batch_dims=len(actions.shape))

    def entropy(self):
        return -tf.reduce_sum(tf.exp(self.log_probs) * self.log_probs, -1)

    def kl(self, other):
        return tf.reduce_sum(tf.exp(self.log_probs) * (self.log_probs - other.log_probs), -1)

    @staticmethod
    def required_model_output_shape(action_space, model_config) -> int:
        return int(action_space.n)


class DiagGaussian(TFActionDistribution):
    """Box actions: the inputs are [mean, log_std] halves."""

    def __init__(self, inputs, model=None):
        super().__init__(inputs, model)
        self.mean, self.log_std = tf.split(self.inputs, 2, axis=-1)
        self.std = tf.exp(self.log_std)

    def sample(self):
        self.last_sample = self.mean + self.std * tf.random.normal(tf.shape(self.mean))
        return self.last_sample

    def deterministic_sample(self):
        self.last_sample = self.mean
        return self.last_sample

    def logp(self, actions):
        z = (tf.cast(actions, self.mean.dtype) - self.mean) / self.std
        return tf.reduce_sum(-0.5 * tf.square(z) - self.log_std - 0.5 * np.log(2 * np.pi), -1)

    def entropy(self):
        return tf.reduce_sum(self.log_std + 0.5 * np.log(2 * np.pi * np.e), -1)

    def kl(self, other):
        return tf.reduce_sum(other.log_std - self.log_std + (tf.square(self.std) + tf.square(self.mean - other.mean))
                             / (2.0 * tf.square(other.std)) - 0.5, -1)

    @staticmethod
    def required_model_output_shape(action_space, model_config) -> int:
        return int(np.prod(action_space.shape)) * 2


def default_tf_dist_class(action_space: gym.Space):
    if isinstance(action_space, gym.spaces.Discrete):
        return Categorical
    if isinstance(action_space, gym.spaces.Box):
        return DiagGaussian
    raise ValueError(f"No default action distribution for {action_space}: the Policy API's default models "
                     "handle Discrete and Box actions; for others, pass make_model / action_distribution_fn.")


__all__ = ["Categorical", "DiagGaussian", "TFActionDistribution", "default_tf_dist_class"]
