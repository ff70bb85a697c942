"""`TFModelV2`: the old stack's TensorFlow model interface (RLlib's `models/tf/tf_modelv2.py`).

Subclass it, build Keras layers / models or `tf.Variable`s as attributes in `__init__`, and implement
`forward(input_dict, state, seq_lens)` (and `value_function()`). The variables are found by walking the
attributes (Keras layers and models, `tf.Module`s, `tf.Variable`s, lists and dicts of them), so a model needs
no registration; their names are attribute paths, the same in every copy of the model (weights travel
between runners by name).
"""
import gymnasium as gym
import tensorflow as tf

from relayrl.policy.models.modelv2 import ModelV2


class TFModelV2(ModelV2):
    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        ModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name, framework="tf2")
        self.var_list = []  # RLlib's register_variables() list; walked like any attribute

    def _flatten_obs(self, obs):
        obs = tf.convert_to_tensor(obs)
        if isinstance(self.obs_space, gym.spaces.Discrete):
            return tf.one_hot(tf.cast(obs, tf.int32), int(self.obs_space.n))
        return tf.reshape(tf.cast(obs, tf.float32), [tf.shape(obs)[0], -1])

    def register_variables(self, variables) -> None:
        self.var_list.extend(variables)

    def variables(self, as_dict: bool = False):
        found = _walk(self.__dict__, "")
        return found if as_dict else list(found.values())

    def trainable_variables(self, as_dict: bool = False):
        found = {k: v for k, v in _walk(self.__dict__, "").items() if v.trainable}
        return found if as_dict else list(found.values())


def _walk(value, path: str, found=None, seen=None) -> dict:
    """{attribute path: tf.Variable} under `value`, in attribute order, each variable once."""
    found = {} if found is None else found
    seen = set() if seen is None else seen
    variable = _as_tf_variable(value)
    if variable is not None:
        if id(variable) not in seen:
            seen.add(id(variable))
            found[path] = variable
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                _walk(item, f"{path}/{key}" if path else key, found, seen)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _walk(item, f"{path}/{i}", found, seen)
    elif hasattr(value, "weights") and hasattr(value, "trainable_weights"):  # a Keras layer or model
        for i, item in enumerate(value.weights):
            _walk(item, f"{path}/{i}", found, seen)
    elif isinstance(value, tf.Module):
        for i, item in enumerate(value.variables):
            _walk(item, f"{path}/{i}", found, seen)
    return found


def _as_tf_variable(value):
    if isinstance(value, tf.Variable):
        return value
    inner = getattr(value, "value", None) if hasattr(value, "trainable") and hasattr(value, "path") else None
    return inner if isinstance(inner, tf.Variable) else None  # a Keras 3 variable wraps a tf.Variable


__all__ = ["TFModelV2"]
