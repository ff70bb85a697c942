"""RLlib's model configs (`ray.rllib.core.models.configs`): dataclasses that build torch networks for custom
RLModules, e.g. `MLPEncoderConfig(input_dims=[4], hidden_layer_dims=[256, 256]).build(framework="torch")`.

An encoder maps a batch dict to `{ENCODER_OUT: features}` (its input is `batch["obs"]`); a head maps a tensor to a
tensor. relayrl builds torch models only.
"""
import dataclasses
from typing import Callable, Dict, Optional, Sequence, Union

import torch
from torch import nn

from relayrl.core.columns import Columns
from relayrl.modules.mlp import activation_class, init_linear

ENCODER_OUT = "encoder_out"
ACTOR = "actor"
CRITIC = "critic"

Initializer = Optional[Union[str, Callable]]


@dataclasses.dataclass
class ModelConfig:
    """Base of the model configs: `input_dims` (the input's shape without the batch axis) and `build()`."""

    input_dims: Optional[Sequence[int]] = None

    def build(self, framework: str = "torch") -> nn.Module:
        if framework != "torch":
            raise ValueError(f"{type(self).__name__}.build(framework={framework!r}): relayrl builds torch models "
                             "only; pass framework='torch'.")
        return self._build()

    def _build(self) -> nn.Module:
        raise NotImplementedError

    @property
    def output_dims(self):
        raise NotImplementedError


@dataclasses.dataclass
class _MLPConfig(ModelConfig):
    """Hidden layers of `hidden_layer_dims`, then an output layer of `output_layer_dim` (None: no output layer, the
    last hidden layer is the output)."""

    hidden_layer_dims: Sequence[int] = (256, 256)
    hidden_layer_use_bias: bool = True
    hidden_layer_activation: Optional[str] = "relu"
    hidden_layer_use_layernorm: bool = False
    hidden_layer_weights_initializer: Initializer = None
    hidden_layer_weights_initializer_config: Optional[Dict] = None
    hidden_layer_bias_initializer: Initializer = None
    hidden_layer_bias_initializer_config: Optional[Dict] = None
    output_layer_dim: Optional[int] = None
    output_layer_use_bias: bool = True
    output_layer_activation: Optional[str] = "linear"
    output_layer_weights_initializer: Initializer = None
    output_layer_weights_initializer_config: Optional[Dict] = None
    output_layer_bias_initializer: Initializer = None
    output_layer_bias_initializer_config: Optional[Dict] = None

    @property
    def output_dims(self):
        if self.output_layer_dim is not None:
            return (self.output_layer_dim,)
        return (self.hidden_layer_dims[-1],) if self.hidden_layer_dims else tuple(self.input_dims)

    def _stack(self) -> nn.Sequential:
        if not self.input_dims or len(self.input_dims) != 1:
            raise ValueError(f"{type(self).__name__} needs input_dims=[n] (a flat input), got {self.input_dims!r}.")
        layers, dim = [], int(self.input_dims[0])
        hidden_act = activation_class(self.hidden_layer_activation)
        for size in self.hidden_layer_dims:
            layers.append(init_linear(nn.Linear(dim, size, bias=self.hidden_layer_use_bias),
                                      self.hidden_layer_weights_initializer,
                                      self.hidden_layer_weights_initializer_config,
                                      self.hidden_layer_bias_initializer if self.hidden_layer_use_bias else None,
                                      self.hidden_layer_bias_initializer_config))
            if self.hidden_layer_use_layernorm:
                layers.append(nn.LayerNorm(size))
            if hidden_act is not None:
                layers.append(hidden_act())
            dim = size
        if self.output_layer_dim is not None:
            layers.append(init_linear(nn.Linear(dim, self.output_layer_dim, bias=self.output_layer_use_bias),
                                      self.output_layer_weights_initializer,
                                      self.output_layer_weights_initializer_config,
                                      self.output_layer_bias_initializer if self.output_layer_use_bias else None,
                                      self.output_layer_bias_initializer_config))
            output_act = activation_class(self.output_layer_activation)
            if output_act is not None:
                layers.append(output_act())
        return nn.Sequential(*layers)


@dataclasses.dataclass
class MLPHeadConfig(_MLPConfig):
    """A head: tensor in, tensor out (e.g. action logits or a value from the encoder's features)."""

    def _build(self) -> nn.Module:
        return self._stack()


@dataclasses.dataclass
class MLPEncoderConfig(_MLPConfig):
    """An encoder: `{"obs": tensor}` in, `{ENCODER_OUT: features}` out."""

    def _build(self) -> nn.Module:
        return Encoder(self._stack())


class Encoder(nn.Module):
    """Runs its network on `batch["obs"]` and returns `{ENCODER_OUT: features}` (RLlib's encoder contract)."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, batch: Dict[str, torch.Tensor], **kwargs) -> Dict[str, torch.Tensor]:
        return {ENCODER_OUT: self.net(batch[Columns.OBS])}


__all__ = ["ACTOR", "CRITIC", "ENCODER_OUT", "Encoder", "MLPEncoderConfig", "MLPHeadConfig", "ModelConfig"]
