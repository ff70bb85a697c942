"""The numpy forward of a recurrent module's acting step: tokenizer MLP -> one LSTM cell -> policy head.

The stateful counterpart of `NumpyMLP` (numpy_forward.py): a module whose acting forward pass is the
default LSTM encoder(s) (lstm_encoder.py) and a plain Linear head hands the EnvRunner
`forward(observations (B, n), state) -> (action_dist_inputs (B, k), state_out)` that reads its weights
in place (views, or the parameters themselves), so weight syncs (in-place copies) are seen at once. `state` is the module's state
structure with a batch axis ({"h", "c"} of (B, 1, cell), or {"actor": ..., "critic": ...} for a
separate critic LSTM, whose state the runners must carry too: the Learner starts sequences from it).

The tokenizer and head are numpy matmuls (NumpyMLP); the cell is torch's fused `lstm_cell` on zero-copy
tensors (NumpyLSTMCell). The results equal the module's torch forward to float rounding (tested).
"""
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from torch import nn

from relayrl.modules.numpy_forward import NumpyMLP, _plain_cpu_float32


class NumpyLSTMCell:
    """One LSTM layer's step on arrays: `cell(x, h, c) -> (h', c')`, all (B, ...) float32.

    The cell itself is torch's fused `lstm_cell` on zero-copy tensors of the arrays, with the layer's own
    parameters (always current): one call instead of a dozen numpy ufuncs, and the same arithmetic as
    the encoder's torch step, so both paths give the same bits."""

    def __init__(self, lstm: nn.LSTM):
        params = lstm._parameters
        self._weights = tuple(params[name] for name in _LSTM_PARAMETERS)
        self.input_width = lstm.input_size
        self.cell_size = lstm.hidden_size

    @classmethod
    def from_lstm(cls, lstm) -> Optional["NumpyLSTMCell"]:
        """None for anything but a one-layer, unidirectional, biased, batch-first CPU float32 nn.LSTM."""
        if (type(lstm) is not nn.LSTM or lstm.num_layers != 1 or lstm.bidirectional or not lstm.bias
                or lstm.proj_size or not lstm.batch_first):
            return None
        params = lstm._parameters
        if set(params) != set(_LSTM_PARAMETERS) or not all(_plain_cpu_float32(params[n]) for n in _LSTM_PARAMETERS):
            return None
        return cls(lstm)

    def __call__(self, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            h_out, c_out = torch.lstm_cell(torch.from_numpy(x), (torch.from_numpy(h), torch.from_numpy(c)),
                                           *self._weights)
        return h_out.numpy(), c_out.numpy()


_LSTM_PARAMETERS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


class NumpyLSTMEncoder:
    """An `LSTMEncoder` (lstm_encoder.py) for one step: `encoder(obs (B, n), {"h", "c"} (B, 1, cell))`."""

    def __init__(self, tokenizer: Optional[NumpyMLP], cell: NumpyLSTMCell):
        self.tokenizer = tokenizer
        self.cell = cell

    @classmethod
    def from_encoder(cls, encoder) -> Optional["NumpyLSTMEncoder"]:
        cell = NumpyLSTMCell.from_lstm(encoder.lstm)
        tokenizer = encoder.tokenizer
        if cell is None or type(tokenizer) is not nn.Sequential:
            return None
        if len(tokenizer) == 0:  # fcnet_hiddens=[]: the LSTM reads the observations
            return cls(None, cell)
        numpy_tokenizer = NumpyMLP.from_sequentials(tokenizer)
        return None if numpy_tokenizer is None else cls(numpy_tokenizer, cell)

    @property
    def input_width(self) -> int:
        return self.cell.input_width if self.tokenizer is None else self.tokenizer.input_width

    def __call__(self, obs: np.ndarray, state: Dict[str, np.ndarray]) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
        tokens = obs if self.tokenizer is None else self.tokenizer(obs)
        h, c = self.cell(tokens, state["h"][:, 0], state["c"][:, 0])
        return h, {"h": h[:, None], "c": c[:, None]}


class NumpyRecurrentForward:
    """`forward(observations, state) -> (action_dist_inputs, state_out)`: the acting step of an actor
    encoder (plus, when given, a critic encoder whose state goes along) and a policy head."""

    def __init__(self, actor: NumpyLSTMEncoder, head: NumpyMLP, critic: Optional[NumpyLSTMEncoder] = None):
        self.actor, self.head, self.critic = actor, head, critic
        self.input_width = actor.input_width

    @classmethod
    def build(cls, encoder, pi: nn.Sequential, vf_encoder=None) -> Optional["NumpyRecurrentForward"]:
        """From the module's LSTMEncoder(s) and policy head; None where any part is not plain."""
        actor = NumpyLSTMEncoder.from_encoder(encoder)
        head = NumpyMLP.from_sequentials(pi)
        critic = None if vf_encoder is None else NumpyLSTMEncoder.from_encoder(vf_encoder)
        if actor is None or head is None or (vf_encoder is not None and critic is None):
            return None
        return cls(actor, head, critic)

    def __call__(self, observations: np.ndarray, state: dict) -> Tuple[np.ndarray, dict]:
        x = observations if observations.dtype == np.float32 else observations.astype(np.float32)
        if self.critic is None:
            features, state_out = self.actor(x, state)
        else:
            features, actor_out = self.actor(x, state["actor"])
            _, critic_out = self.critic(x, state["critic"])
            state_out = {"actor": actor_out, "critic": critic_out}
        return self.head(features), state_out


__all__ = ["NumpyLSTMCell", "NumpyLSTMEncoder", "NumpyRecurrentForward"]
