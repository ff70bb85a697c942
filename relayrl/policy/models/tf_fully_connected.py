"""The default TF policy model: an MLP for the logits and, unless `vf_share_layers`, a separate MLP for values.

Plain `tf.Variable`s and matmuls rather than Keras layers: eager calls are per op, and Keras adds several
milliseconds per forward pass on a small network. Initialised as RLlib's TF model (normc: each output
unit's weights scaled to norm 1.0, 0.01 for the logits and value heads; zero biases).
"""
import numpy as np
import tensorflow as tf

from relayrl.policy.models.modelv2 import flat_obs_size
from relayrl.policy.models.tf_modelv2 import TFModelV2

ACTIVATIONS = {"tanh": tf.tanh, "relu": tf.nn.relu, "swish": tf.nn.silu, "silu": tf.nn.silu, "elu": tf.nn.elu,
               "linear": None, None: None}


def hidden_layers_config(model_config: dict) -> tuple:
    """(fcnet_hiddens, the fcnet_activation function) of RLlib's old model keys; an unknown activation raises."""
    activation = model_config.get("fcnet_activation", "tanh")
    if activation not in ACTIVATIONS:
        raise ValueError(f"model fcnet_activation={activation!r}: use one of {sorted(k for k in ACTIVATIONS if k)}.")
    return list(model_config.get("fcnet_hiddens", [256, 256])), ACTIVATIONS[activation]


def _dense(in_size: int, out_size: int, std: float, name: str) -> list:
    weights = np.random.standard_normal((in_size, out_size)).astype(np.float32)
    weights *= std / np.sqrt(np.square(weights).sum(axis=0, keepdims=True))
    return [tf.Variable(weights, name=f"{name}_w"), tf.Variable(np.zeros(out_size, np.float32), name=f"{name}_b")]


def _mlp(in_size: int, hiddens: list[int], name: str) -> list:
    layers = []
    for i, size in enumerate(hiddens):
        layers.append(_dense(in_size, size, 1.0, f"{name}_{i}"))
        in_size = size
    return layers


class TFFullyConnectedNetwork(TFModelV2):
    """`model_config`: fcnet_hiddens, fcnet_activation, vf_share_layers (RLlib's old model keys)."""

    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        TFModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        hiddens, self.activation = hidden_layers_config(model_config)
        in_size = flat_obs_size(obs_space)
        last = hiddens[-1] if hiddens else in_size
        self.hidden = _mlp(in_size, hiddens, "fc")
        self.logits = _dense(last, num_outputs, 0.01, "logits")
        self.share = bool(model_config.get("vf_share_layers", False))
        self.value_hidden = [] if self.share else _mlp(in_size, hiddens, "fc_value")
        self.value_head = _dense(last, 1, 0.01, "value_out")
        self._features = self._flat = None

    def _run(self, layers, x):
        for w, b in layers:
            x = tf.matmul(x, w) + b
            if self.activation is not None:
                x = self.activation(x)
        return x

    def forward(self, input_dict, state, seq_lens):
        self._flat = input_dict["obs_flat"]
        self._features = self._run(self.hidden, self._flat)
        return tf.matmul(self._features, self.logits[0]) + self.logits[1], state

    def value_function(self):
        if self._flat is None:
            raise RuntimeError("value_function() before the model ran forward: call model(input_dict) first.")
        features = self._features if self.share else self._run(self.value_hidden, self._flat)
        return tf.squeeze(tf.matmul(features, self.value_head[0]) + self.value_head[1], 1)


FullyConnectedNetwork = TFFullyConnectedNetwork  # RLlib's name in models/tf/fcnet.py

__all__ = ["FullyConnectedNetwork", "TFFullyConnectedNetwork"]
