"""The default policy model: an MLP for the logits and, unless `vf_share_layers`, a separate MLP for values."""

from torch import nn

from relayrl.policy.models.modelv2 import TorchModelV2, flat_obs_size

_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "swish": nn.SiLU, "silu": nn.SiLU, "elu": nn.ELU,
                "linear": None, None: None}


def mlp_layers(in_size: int, hiddens: list[int], activation: str) -> nn.Sequential:
    if activation not in _ACTIVATIONS:
        raise ValueError(f"model fcnet_activation={activation!r}: use one of {sorted(k for k in _ACTIVATIONS if k)}.")
    layers = []
    for size in hiddens:
        layers.append(nn.Linear(in_size, size))
        if _ACTIVATIONS[activation] is not None:
            layers.append(_ACTIVATIONS[activation]())
        in_size = size
    return nn.Sequential(*layers)


class FullyConnectedNetwork(TorchModelV2, nn.Module):
    """`model_config`: fcnet_hiddens, fcnet_activation, vf_share_layers (RLlib's old model keys)."""

    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        nn.Module.__init__(self)
        hiddens = list(model_config.get("fcnet_hiddens", [256, 256]))
        activation = model_config.get("fcnet_activation", "tanh")
        in_size = flat_obs_size(obs_space)
        last = hiddens[-1] if hiddens else in_size
        self._hidden = mlp_layers(in_size, hiddens, activation)
        self._logits = nn.Linear(last, num_outputs)
        self._share = bool(model_config.get("vf_share_layers", False))
        self._value_hidden = None if self._share else mlp_layers(in_size, hiddens, activation)
        self._value_head = nn.Linear(last, 1)
        self._features = self._flat = None

    def forward(self, input_dict, state, seq_lens):
        self._flat = input_dict["obs_flat"]
        self._features = self._hidden(self._flat)
        return self._logits(self._features), state

    def value_function(self):
        if self._flat is None:
            raise RuntimeError("value_function() before the model ran forward: call model(input_dict) first.")
        features = self._features if self._share else self._value_hidden(self._flat)
        return self._value_head(features).squeeze(1)


__all__ = ["FullyConnectedNetwork", "mlp_layers"]
