"""The numpy fast path of `EagerTFPolicy.compute_actions`: numpy_forward.py's MLP on the TF default model.

An eager TF forward pass costs milliseconds per env step on a small network (one dispatch per op); the
same network in numpy costs microseconds. It applies only where it gives the same distribution and columns
as the TF path: the default TFFullyConnectedNetwork with tanh / relu / linear activations, Categorical, no
state, no action_sampler_fn / action_distribution_fn / extra_action_out. The numpy weights are re-read when
the policy's weights version changes: every update through the policy (learn_on_batch, apply_gradients,
set_weights, set_state) bumps it; code that assigns the variables directly should set
`policy.config["_disable_numpy_forward"] = True`.
"""
import tensorflow as tf

from relayrl.policy.model_policy import ModelPolicy
from relayrl.policy.models.tf_action_dist import Categorical
from relayrl.policy.models.tf_fully_connected import ACTIVATIONS, TFFullyConnectedNetwork
from relayrl.policy.numpy_forward import NUMPY_ACTIVATIONS, NumpyCategoricalMLP

_BY_TF_FUNCTION = {fn: NUMPY_ACTIVATIONS[name] for name, fn in ACTIVATIONS.items() if name in NUMPY_ACTIVATIONS}


def plan_tf_numpy_forward(policy):
    model = policy.model
    if (type(model) is not TFFullyConnectedNetwork or policy.dist_class is not Categorical
            or policy._action_sampler_fn is not None or policy._action_distribution_fn is not None
            or type(policy).extra_action_out is not ModelPolicy.extra_action_out or policy._state_inputs
            or model.activation not in _BY_TF_FUNCTION):
        return None
    activation = _BY_TF_FUNCTION[model.activation]

    def read_layers():
        layers = []
        for w, b in model.hidden:
            layers.append((w.numpy(), b.numpy()))
            if activation is not None:
                layers.append(activation)
        return layers + [(model.logits[0].numpy(), model.logits[1].numpy())]

    seed = int(tf.random.uniform((), maxval=2 ** 31 - 1, dtype=tf.int32).numpy())
    return NumpyCategoricalMLP(read_layers, lambda: policy._weights_version, seed=seed)


__all__ = ["plan_tf_numpy_forward"]
