"""The numpy fast path of `EagerTFPolicy.compute_actions`: numpy_forward.py's PolicyNumpyForward on the TF
default model's weights.

An eager TF forward pass costs milliseconds per env step on a small network (one dispatch per op); the
same network in numpy costs microseconds. It applies only where it gives the same distribution and columns
as the TF path: the default TFFullyConnectedNetwork with tanh / relu / linear activations on a flat observation
space, Categorical, no state, no action_sampler_fn / action_distribution_fn / extra_action_out. TF variables
give no numpy views, so the NumpyMLP is read again when the policy's weights version changes: every update
through the policy (learn_on_batch, apply_gradients, set_weights, set_state) bumps it; code that assigns the
variables directly should set `policy.config["_disable_numpy_forward"] = True`.
"""
import gymnasium as gym
import tensorflow as tf

from relayrl.modules.numpy_forward import ACTIVATIONS_BY_NAME, NumpyMLP
from relayrl.policy.model_policy import ModelPolicy
from relayrl.policy.models.tf_action_dist import Categorical
from relayrl.policy.models.tf_fully_connected import ACTIVATIONS, TFFullyConnectedNetwork
from relayrl.policy.numpy_forward import PolicyNumpyForward, acts_plainly

_BY_TF_FUNCTION = {fn: ACTIVATIONS_BY_NAME[name] for name, fn in ACTIVATIONS.items() if name in ACTIVATIONS_BY_NAME}


def plan_tf_numpy_forward(policy):
    model = policy.model
    if (type(model) is not TFFullyConnectedNetwork or policy.dist_class is not Categorical
            or not acts_plainly(policy) or type(policy).extra_action_out is not ModelPolicy.extra_action_out
            or model.activation not in _BY_TF_FUNCTION or not isinstance(policy.observation_space, gym.spaces.Box)):
        return None
    activation = _BY_TF_FUNCTION[model.activation]

    def read_mlps():
        hidden = [(w.numpy(), b.numpy(), activation) for w, b in model.hidden]
        return NumpyMLP(hidden + [(model.logits[0].numpy(), model.logits[1].numpy(), None)]), None

    seed = int(tf.random.uniform((), maxval=2 ** 31 - 1, dtype=tf.int32).numpy())
    return PolicyNumpyForward(read_mlps, lambda: policy._weights_version, seed=seed)


__all__ = ["plan_tf_numpy_forward"]
