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


class NumpyCategoricalMLP:
    @classmethod
    def plan(cls, policy) -> Optional["NumpyCategoricalMLP"]:
        from relayrl.policy.torch_policy import TorchPolicy

        model = policy.model
        if (type(model) is not FullyConnectedNetwork or policy.dist_class is not TorchCategorical
                or policy._action_sampler_fn is not None or policy._action_distribution_fn is not None
                or type(policy).extra_action_out is not TorchPolicy.extra_action_out or policy._state_inputs
                or not all(type(m) in _ACTIVATIONS or isinstance(m, torch.nn.Linear) for m in model._hidden)):
            return None
        return cls(policy)

    def __init__(self, policy):
        self.model = policy.model
        self._params = [p for p in self.model._hidden.parameters()] + list(self.model._logits.parameters())
        self._versions = None
        self._layers = []
        self.rng = np.random.default_rng(int(torch.randint(2 ** 31 - 1, (1,)).item()))

    def _refresh(self) -> None:
        versions = [p._version for p in self._params]
        if versions == self._versions:
            return
        layers = []
        for module in list(self.model._hidden) + [self.model._logits]:
            if isinstance(module, torch.nn.Linear):
                layers.append((module.weight.detach().numpy().T.copy(), module.bias.detach().numpy().copy()))
            else:
                layers.append(_ACTIVATIONS[type(module)])
        self._layers, self._versions = layers, versions

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
