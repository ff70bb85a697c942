"""The fast path of `TorchPolicy.compute_actions`: the default MLP + categorical sampling in numpy.

Acting on one or a few observations per step, torch's per-call overhead is most of the time; the same
network in numpy is several times faster. It applies only where it gives the same distribution and columns
as the torch path: the default FullyConnectedNetwork, TorchCategorical, no state, no action_sampler_fn /
action_distribution_fn and no extra_action_out (which may read the torch model). The numpy weights are
re-read whenever a parameter changed: torch's in-place version counters (most optimizer steps, set_weights,
in-place edits) and the policy's count of its own optimizer steps (fused optimizers bump no torch counter).
"""
import math
from operator import attrgetter
from typing import Optional

import numpy as np
import torch

from relayrl.policy.models.fully_connected import FullyConnectedNetwork
from relayrl.policy.models.torch_action_dist import TorchCategorical
from relayrl.policy.sample_batch import SampleBatch


def _relu(x, out=None):
    return np.maximum(x, 0.0, out=out)


# activations take out= (the one-row path applies them in place)
_ACTIVATIONS = {torch.nn.Tanh: np.tanh, torch.nn.ReLU: _relu}
NUMPY_ACTIVATIONS = {"tanh": np.tanh, "relu": _relu, "linear": None, None: None}

_VERSION = attrgetter("_version")  # torch's in-place version counter of a parameter


class NumpyCategoricalMLP:
    """The MLP's layers as numpy arrays (re-read when `version()` changes) and categorical sampling.
    `read_layers()` gives [(weights [in, out], bias), activation function, ...]; tf_numpy_forward.py plans the
    same object for the TF default model."""

    # the columns `extra_row` adds to sample_row's, in the general path's order (numpy_value_forward.py adds one)
    extra_columns: tuple = ()

    @classmethod
    def plan(cls, policy) -> Optional["NumpyCategoricalMLP"]:
        from relayrl.policy.torch_policy import TorchPolicy

        if type(policy).extra_action_out is not TorchPolicy.extra_action_out or not mlp_applies(policy):
            return None
        modules = list(policy.model._hidden) + [policy.model._logits]
        return cls(layer_reader(modules), versions_of(policy, modules),
                   seed=int(torch.randint(2 ** 31 - 1, (1,)).item()))

    def __init__(self, read_layers, version, seed: int):
        self._read_layers = read_layers
        self._version = version
        self._versions = None
        self._layers = []  # [(weights [in, out], bias, in-place activation or None, one-row buffer or None)]
        self.rng = np.random.default_rng(seed)

    def _refresh(self) -> None:
        versions = self._version()
        if versions != self._versions:
            self._reload()
            self._versions = versions

    def _reload(self) -> None:
        """Re-read the weights (they changed)."""
        self._layers = _compile(self._read_layers())

    def compute(self, obs, explore: bool):
        self._refresh()
        x = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
        return self._compute_one(x, explore) if len(x) == 1 else self._compute_rows(x, explore)

    def _compute_rows(self, x, explore: bool):
        for weights, bias, activation, _ in self._layers:
            x = x @ weights
            x += bias
            if activation is not None:
                activation(x, out=x)
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

    def _compute_one(self, x, explore: bool):
        """`compute` on one observation, through `sample_row`. The returned arrays are fresh (the runner keeps
        views of them)."""
        action, logits, probability, logp = self.sample_row(x[0], explore)
        probability_and_logp = np.array([probability, logp], dtype=np.float32)  # one allocation for both columns
        return np.array([action], dtype=np.int64), {
            SampleBatch.ACTION_DIST_INPUTS: logits[None],
            SampleBatch.ACTION_PROB: probability_and_logp[:1], SampleBatch.ACTION_LOGP: probability_and_logp[1:]}

    def sample_row(self, x, explore: bool):
        """(action, logits [A] (fresh), probability, log-probability) for one flat observation `x` [n]: the layers
        in float32 as vector-matrix products into preallocated hidden buffers (the same float32 values as the
        batched path's matrix products: tested), then the softmax and the draw on the few logits as Python
        floats (float64). Each numpy call costs ~1 us of overhead, more than the arithmetic on a few logits; the
        batched path's float32 softmax gives the same actions and values equal to float32 precision
        (tests/policy/test_policy_fast_paths.py)."""
        for weights, bias, activation, buffer in self._layers:
            x = np.dot(x, weights, out=buffer)
            x += bias
            if activation is not None:
                activation(x, out=x)
        values = x.tolist()
        top = max(values)
        exps = [math.exp(value - top) for value in values]
        total = sum(exps)
        if explore:
            # the first action whose cumulative weight reaches the draw (the batched path's
            # (draw > cumulative).sum(); a NaN draw or weight compares False there and here: action 0)
            draw, action, last = self.rng.random() * total, 0, len(exps) - 1
            edge = exps[0]
            while action < last and draw > edge:
                action += 1
                edge += exps[action]
        else:
            action = values.index(top)  # the first maximum, as argmax
        return action, x, exps[action] / total, values[action] - top - math.log(total)

    def extra_row(self, x) -> tuple:
        """The values of `extra_columns` for one flat observation `x` [n] (after sample_row on it)."""
        return ()


def mlp_applies(policy) -> bool:
    """The policy acts through the default FullyConnectedNetwork's logits MLP and TorchCategorical, nothing else,
    and every step of its optimizers is one the fast path sees (the caller checks extra_action_out)."""
    model = policy.model
    return (type(model) is FullyConnectedNetwork and policy.dist_class is TorchCategorical
            and policy._action_sampler_fn is None and policy._action_distribution_fn is None
            and not policy._state_inputs and modules_fit(model._hidden) and not _fused_steps_unseen(policy))


def modules_fit(modules) -> bool:
    return all(type(m) in _ACTIVATIONS or isinstance(m, torch.nn.Linear) for m in modules)


def layer_reader(modules: list):
    """read_layers() for torch modules: [(weights [in, out], bias), activation function, ...]."""
    def read_layers():
        return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
                if isinstance(m, torch.nn.Linear) else _ACTIVATIONS[type(m)] for m in modules]
    return read_layers


def versions_of(policy, modules: list):
    """version() for torch modules: torch's in-place version counters change with set_weights, in-place edits
    and most optimizer steps; the policy's own counter with every step it takes (fused optimizers leave the
    torch counters alone)."""
    params = [p for m in modules for p in m.parameters()]
    return lambda: (policy._weights_version, *map(_VERSION, params))


def _fused_steps_unseen(policy) -> bool:
    """True where a fused optimizer may step outside the TorchPolicy methods that count steps (an overriding
    learn_on_batch / apply_gradients): its updates would change no counter the fast path sees."""
    from relayrl.policy.torch_policy import TorchPolicy

    kind = type(policy)
    if kind.learn_on_batch is TorchPolicy.learn_on_batch and kind.apply_gradients is TorchPolicy.apply_gradients:
        return False
    return any(group.get("fused") for optimizer in policy._optimizers for group in optimizer.param_groups)


def _compile(layers: list) -> list:
    """read_layers()'s [(weights, bias), activation, ...] as (weights, bias, in-place activation, buffer) per
    linear layer; every layer but the last (the logits, handed out) gets a reusable (out,) buffer for one row."""
    compiled = []
    for item in layers:
        if callable(item):
            weights, bias, _, buffer = compiled[-1]
            compiled[-1] = (weights, bias, item, buffer)
        else:
            weights, bias = item
            compiled.append((weights, bias, None, np.empty(weights.shape[1], dtype=np.result_type(weights, bias))))
    if compiled:
        compiled[-1] = compiled[-1][:3] + (None,)
    return compiled
