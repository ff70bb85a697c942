"""The fast path of `TorchPolicy.compute_actions`: the default MLP + categorical sampling in numpy.

Acting on one or a few observations per step, torch's per-call overhead is most of the time; the same
network in numpy is several times faster. It applies only where it gives the same distribution and columns
as the torch path: the default FullyConnectedNetwork, TorchCategorical, no state, no action_sampler_fn /
action_distribution_fn and no extra_action_out (which may read the torch model). The numpy weights are
refreshed whenever a parameter changed (torch's in-place version counters: optimizer steps, set_weights).
"""
from typing import Optional

import numpy as np
import torch

from relayrl.policy.models.fully_connected import FullyConnectedNetwork
from relayrl.policy.models.torch_action_dist import TorchCategorical
from relayrl.policy.sample_batch import SampleBatch

_ACTIVATIONS = {torch.nn.Tanh: np.tanh, torch.nn.ReLU: lambda x: np.maximum(x, 0.0)}
NUMPY_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0), "linear": None, None: None}


class NumpyCategoricalMLP:
    """The MLP's layers as numpy arrays (re-read when `version()` changes) and categorical sampling.
    `read_layers()` gives [(weights [in, out], bias), activation function, ...]; tf_numpy_forward.py plans the
    same object for the TF default model."""

    @classmethod
    def plan(cls, policy) -> Optional["NumpyCategoricalMLP"]:
        from relayrl.policy.torch_policy import TorchPolicy

        model = policy.model
        if (type(model) is not FullyConnectedNetwork or policy.dist_class is not TorchCategorical
                or policy._action_sampler_fn is not None or policy._action_distribution_fn is not None
                or type(policy).extra_action_out is not TorchPolicy.extra_action_out or policy._state_inputs
                or not all(type(m) in _ACTIVATIONS or isinstance(m, torch.nn.Linear) for m in model._hidden)):
            return None
        params = list(model._hidden.parameters()) + list(model._logits.parameters())
        modules = list(model._hidden) + [model._logits]

        def read_layers():
            return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
                    if isinstance(m, torch.nn.Linear) else _ACTIVATIONS[type(m)] for m in modules]

        # torch's in-place version counters change with every optimizer step and set_weights
        return cls(read_layers, lambda: tuple(p._version for p in params),
                   seed=int(torch.randint(2 ** 31 - 1, (1,)).item()))

    def __init__(self, read_layers, version, seed: int):
        self._read_layers = read_layers
        self._version = version
        self._versions = None
        self._layers = []
        self.rng = np.random.default_rng(seed)

    def _refresh(self) -> None:
        versions = self._version()
        if versions != self._versions:
            self._layers, self._versions = self._read_layers(), versions

    def compute(self, obs, explore: bool):
        self._refresh()
        x = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
        for layer in self._layers:
            x = layer(x) if callable(layer) else x @ layer[0] + layer[1]
        logits = x
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        if explore:
            cumulative = np.exp(log_probs).cumsum(axis=1)
            draws = self.rng.random((len(x), 1)) * cumulative[:, -1:]
            actions = (draws > cumulative).sum(axis=1)
            actions = np.minimum(actions, logits.shape[1] - 1)
        else:
            actions = log_probs.argmax(axis=1)
        logp = log_probs[np.arange(len(x)), actions]
        return actions.astype(np.int64), {SampleBatch.ACTION_DIST_INPUTS: logits,
                                          SampleBatch.ACTION_PROB: np.exp(logp), SampleBatch.ACTION_LOGP: logp}
