"""`NumpyForwardAPI`: a module that can compute its action distribution inputs in numpy declares it here.

On the few rows of a vector-env step, a small MLP's torch calls cost far more in dispatch than in
arithmetic. A module whose acting forward pass is plain matmuls can hand the EnvRunner a numpy
function that computes the same `action_dist_inputs` from *views* of its own weights (one matmul per
layer). Views share memory with the parameters, so weight syncs (in-place copies) are seen at once.

The module answers for its own forward pass only; whether the runner may use the function (no
Exploration object, no connector piece that changes the logits, a distribution it can sample in
numpy) is the runner's question (relayrl/env/sampling/numpy_actions.py).

`NumpyMLP` is relayrl's one numpy forward pass of an MLP: the RLModules' (PPO, SAC, the LSTM modules'
tokenizers and heads) and the Policy API's default models' (relayrl/policy/numpy_forward.py) alike.
"""
from typing import Callable, Iterable, List, Optional, Tuple

import numpy as np
import torch
from torch import nn


class NumpyForwardAPI:
    """Mixin for an RLModule whose `forward_exploration` / `forward_inference` can run in numpy."""

    def numpy_forward(self) -> Optional["NumpyMLP"]:
        """A numpy function `observations (B, n) -> action_dist_inputs (B, k)` computing what both acting
        forward passes put under `action_dist_inputs` (to float rounding), or None where this module, as
        configured now, cannot (other layers, devices or dtypes, or a subclass with its own forward)."""
        return None

    def numpy_recurrent_forward(self):
        """For a stateful module: a numpy function `(observations (B, n), state) -> (action_dist_inputs
        (B, k), state_out)` computing one acting step (numpy_recurrent_forward.py's
        NumpyRecurrentForward), `state` the module's state structure with a batch axis; or None."""
        return None


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0, out=x)


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x, out=x)


# The activations a numpy forward pass computes (in place, on the layer's fresh output), by torch module
# and by the name the old stack's model configs use (fcnet_activation).
_ACTIVATIONS = {nn.Tanh: _tanh, nn.ReLU: _relu}
ACTIVATIONS_BY_NAME = {"tanh": _tanh, "relu": _relu, "linear": None, None: None}

Layer = Tuple[np.ndarray, np.ndarray, Optional[Callable]]


class NumpyMLP:
    """`mlp(observations)` -> outputs: `x @ W.T + b` and the activation per layer, in float32.

    `layers`: (W.T [in, out], bias [out], in-place activation or None) per linear layer."""

    def __init__(self, layers: List[Layer]):
        self.layers = layers
        self.input_width = layers[0][0].shape[0]
        self._row_buffers = None  # row()'s reused hidden outputs

    @classmethod
    def from_sequentials(cls, *sequentials: nn.Module) -> Optional["NumpyMLP"]:
        """Numpy views of plain `nn.Sequential`s of `Linear` layers (CPU float32) with tanh/relu between
        them (or of bare `Linear` layers), run one after the other; None for anything else."""
        layers: List[Layer] = []
        for sequential in sequentials:
            if type(sequential) is nn.Linear:
                sequential = [sequential]
            elif type(sequential) is not nn.Sequential:
                return None
            for layer in sequential:
                kind = type(layer)
                if kind is nn.Linear:
                    weight, bias = layer._parameters.get("weight"), layer._parameters.get("bias")
                    if not all(_plain_cpu_float32(p) for p in (weight, bias)):
                        return None
                    layers.append((weight.detach().numpy().T, bias.detach().numpy(), None))
                elif kind in _ACTIVATIONS and layers and layers[-1][2] is None:
                    layers[-1] = layers[-1][:2] + (_ACTIVATIONS[kind],)
                else:
                    return None
        return cls(layers) if layers else None

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        x = observations if observations.dtype == np.float32 else observations.astype(np.float32)
        for weight_t, bias, activation in self.layers:
            x = x @ weight_t
            x += bias
            if activation is not None:
                x = activation(x)
        return x

    def row(self, x: np.ndarray) -> np.ndarray:
        """`mlp` on one flat float32 observation [n] -> outputs [k] (a fresh array): vector-matrix products
        into reused hidden buffers, the same float32 values as the batched call on that row (tested). On one
        row each numpy call's overhead costs more than its arithmetic, so the fewer calls the better."""
        buffers = self._row_buffers
        if buffers is None:
            buffers = self._row_buffers = [np.empty(w.shape[1], np.result_type(w, b)) for w, b, _ in self.layers[:-1]]
            buffers.append(None)  # the outputs are handed out: a fresh array each call
        for (weight_t, bias, activation), buffer in zip(self.layers, buffers):
            x = np.dot(x, weight_t, out=buffer)
            x += bias
            if activation is not None:
                activation(x)
        return x


def overrides_any(cls: type, base: type, names: Iterable[str]) -> bool:
    """Whether `cls` (a subclass of `base`) defines any of the methods `names` differently from `base`."""
    return any(getattr(cls, name) is not getattr(base, name) for name in names)


def _plain_cpu_float32(parameter) -> bool:
    return isinstance(parameter, torch.Tensor) and parameter.dtype == torch.float32 and parameter.device.type == "cpu"


__all__ = ["ACTIVATIONS_BY_NAME", "NumpyForwardAPI", "NumpyMLP", "overrides_any"]
