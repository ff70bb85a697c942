"""The default recurrent encoder: a tokenizer (the MLP or CNN encoder) then one `nn.LSTM` layer (RLlib's
`TorchLSTMEncoder` with `num_layers=1`, batch-major).

State per item is `{"h": (1, cell), "c": (1, cell)}` (num_layers first, as RLlib's `get_initial_state`),
so a batch holds `(B, 1, cell)`; the LSTM wants `(1, B, cell)`, hence the transposes in `forward`.
"""
from typing import Dict, Tuple

import numpy as np
import torch
from torch import nn

from relayrl.modules.encoders import make_encoder
from relayrl.modules.mlp import _initializer, run_layers


def refuse_prev_action_and_reward(cfg, module_name: str) -> None:
    """lstm_use_prev_action / lstm_use_prev_reward are refused with the fix, not silently ignored."""
    for option in ("lstm_use_prev_action", "lstm_use_prev_reward"):
        if getattr(cfg, option):
            raise ValueError(
                f"{module_name}: model_config {option}=True is not supported (RLlib's new API stack does not "
                f"read it either). Fix: set {option}=False, or add the previous action / reward to the "
                "observation with an env-to-module connector piece.")


class LSTMEncoder(nn.Module):
    """obs (B, T, ...) and state {h, c} (B, 1, cell) -> features (B, T, cell) and the state after step T."""

    def __init__(self, observation_space, cfg, module_name: str):
        super().__init__()
        self.tokenizer, token_dim = make_encoder(observation_space, cfg, module_name)
        self.cell_size = int(cfg.lstm_cell_size)
        self.lstm = nn.LSTM(token_dim, self.cell_size, num_layers=1, batch_first=True)
        kernel_fn, bias_fn = _initializer(cfg.lstm_kernel_initializer), _initializer(cfg.lstm_bias_initializer)
        for name, param in self.lstm.named_parameters():
            # RLlib applies the kernel initialiser to both weight matrices and the bias one to both biases.
            if name.startswith("weight") and kernel_fn is not None:
                kernel_fn(param.data, **(cfg.lstm_kernel_initializer_kwargs or {}))
            elif name.startswith("bias") and bias_fn is not None:
                bias_fn(param.data, **(cfg.lstm_bias_initializer_kwargs or {}))

    def initial_state(self) -> Dict[str, np.ndarray]:
        zeros = np.zeros((1, self.cell_size), np.float32)
        return {"h": zeros, "c": zeros.copy()}

    def forward(self, obs: torch.Tensor, state: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, Dict]:
        batch, time = obs.shape[0], obs.shape[1]
        # The tokenizer sees every step as one row (B*T): a CNN wants 4-D input, an MLP does not care.
        tokens = run_layers(obs.reshape((batch * time,) + obs.shape[2:]), self.tokenizer)
        tokens = tokens.reshape(batch, time, -1)
        h, c = state["h"], state["c"]
        if time == 1 and not torch.is_grad_enabled():
            # One env step (the runners' case): the fused cell op, without nn.LSTM's per-call checks and
            # (1, B, cell) transposes. Same arithmetic as the sequence kernel.
            params = self.lstm._parameters
            h, c = torch.lstm_cell(tokens[:, 0], (h[:, 0], c[:, 0]), params["weight_ih_l0"], params["weight_hh_l0"],
                                   params["bias_ih_l0"], params["bias_hh_l0"])
            return h[:, None], {"h": h[:, None], "c": c[:, None]}
        out, (h, c) = self.lstm(tokens, (h.transpose(0, 1).contiguous(), c.transpose(0, 1).contiguous()))
        return out, {"h": h.transpose(0, 1), "c": c.transpose(0, 1)}


def initial_state_batch(initial: Dict, batch_size: int, like: torch.Tensor) -> Dict:
    """The initial state repeated for `batch_size` rows, as tensors on `like`'s device (a forward pass called
    without `state_in`, e.g. by a user or an export)."""
    def expand(x):
        if isinstance(x, dict):
            return {k: expand(v) for k, v in x.items()}
        t = torch.as_tensor(x, dtype=torch.float32, device=like.device)
        return t.unsqueeze(0).expand((batch_size,) + tuple(t.shape))

    return expand(initial)


__all__ = ["LSTMEncoder", "initial_state_batch"]
