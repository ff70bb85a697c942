"""`LSTMWrapper`: the Policy API's default model with `"use_lstm": True` (RLlib's `models/torch/recurrent_net.py`).

As RLlib's wrapper: the default FC model's hidden layers (fcnet_hiddens, fcnet_activation; RLlib builds the
wrapped model with num_outputs=None, i.e. without its heads), optionally followed by the previous action
(one-hot for discrete spaces) and reward, feed an LSTM of `lstm_cell_size`; the logits and the value are
linear heads on the LSTM's output (the value always shares the LSTM). State: [h, c], zeros of [cell] each.

`forward(input_dict, state, seq_lens)` takes its rows unpadded (sum(seq_lens) rows, what TorchPolicy trains
on) or padded to B * T rows (RLlib's layout) and answers in the same layout (torch_sequences.py).
"""
import gymnasium as gym
import numpy as np
import torch
from torch import nn

from relayrl.policy.models.fully_connected import mlp_layers
from relayrl.policy.models.modelv2 import TorchModelV2, flat_obs_size
from relayrl.policy.models.torch_sequences import SequenceLayout
from relayrl.policy.sample_batch import SampleBatch


class LSTMWrapper(TorchModelV2, nn.Module):
    """model_config: lstm_cell_size, lstm_use_prev_action, lstm_use_prev_reward, fcnet_hiddens, fcnet_activation."""

    trains_on_sequences = True  # TorchPolicy trains it on max_seq_len sequences (rnn_sequencing.add_seq_lens)

    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        nn.Module.__init__(self)
        self.cell_size = _positive_int(model_config.get("lstm_cell_size", 256), "lstm_cell_size")
        self.use_prev_action = bool(model_config.get("lstm_use_prev_action", False))
        self.use_prev_reward = bool(model_config.get("lstm_use_prev_reward", False))
        hiddens = list(model_config.get("fcnet_hiddens", [256, 256]))
        in_size = flat_obs_size(obs_space)
        self._encoder = mlp_layers(in_size, hiddens, model_config.get("fcnet_activation", "tanh"))
        self.action_dim = prev_action_size(action_space) if self.use_prev_action else 0
        lstm_in = (hiddens[-1] if hiddens else in_size) + self.action_dim + int(self.use_prev_reward)
        self.lstm = nn.LSTM(lstm_in, self.cell_size, batch_first=True)
        self._logits = nn.Linear(self.cell_size, num_outputs)
        self._value_branch = nn.Linear(self.cell_size, 1)
        self._features = None

    def get_initial_state(self) -> list:
        zeros = self._logits.weight.new_zeros(self.cell_size)
        return [zeros, zeros.clone()]

    def forward(self, input_dict, state, seq_lens):
        if len(state) != 2:
            raise ValueError(f"the LSTM model needs its state [h, c] (state_in_0, state_in_1), got {len(state)} "
                             "state inputs: start from policy.get_initial_state() and pass each step's state_out.")
        x = self._encoder(input_dict["obs_flat"].float())
        extra = self._previous_inputs(input_dict, len(x))
        if extra:
            x = torch.cat([x, *extra], dim=1)
        h, c = (torch.as_tensor(s, dtype=x.dtype).reshape(-1, self.cell_size) for s in state)
        sequences = SequenceLayout(len(x), seq_lens, len(h))
        self._features, (h, c) = sequences.run_lstm(self.lstm, x, h, c)
        return self._logits(self._features), [h, c]

    def value_function(self):
        if self._features is None:
            raise RuntimeError("value_function() before the model ran forward: call model(input_dict) first.")
        return self._value_branch(self._features).reshape(-1)

    def _previous_inputs(self, input_dict, rows: int) -> list:
        extra = []
        if self.use_prev_action:
            extra.append(encode_prev_actions(self.action_space, _required(input_dict, SampleBatch.PREV_ACTIONS,
                                                                          "lstm_use_prev_action"), rows))
        if self.use_prev_reward:
            rewards = _required(input_dict, SampleBatch.PREV_REWARDS, "lstm_use_prev_reward")
            extra.append(torch.as_tensor(rewards).float().reshape(rows, 1))
        return extra


def prev_action_size(space: gym.Space) -> int:
    """Width of the previous action as an LSTM input: one-hot for (Multi)Discrete, flattened for Box."""
    if isinstance(space, gym.spaces.Discrete):
        return int(space.n)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return int(np.sum(space.nvec))
    if isinstance(space, gym.spaces.Box):
        return int(np.prod(space.shape))
    raise ValueError(f"model lstm_use_prev_action=True: the action space {space} is not Discrete, MultiDiscrete "
                     "or Box; set lstm_use_prev_action=False or use a custom model.")


def encode_prev_actions(space: gym.Space, actions, rows: int) -> torch.Tensor:
    actions = torch.as_tensor(actions)
    if isinstance(space, gym.spaces.Discrete):
        return nn.functional.one_hot(actions.long().reshape(rows), int(space.n)).float()
    if isinstance(space, gym.spaces.MultiDiscrete):
        actions = actions.long().reshape(rows, -1)
        return torch.cat([nn.functional.one_hot(actions[:, i], int(n)).float()
                          for i, n in enumerate(np.ravel(space.nvec))], dim=1)
    return actions.float().reshape(rows, -1)


def _required(input_dict, key: str, option: str):
    value = input_dict.get(key)
    if value is None:
        raise KeyError(f"model {option}=True: the input dict has no {key!r}; pass prev_action / prev_reward "
                       "(the runners and train batches carry them).")
    return value


def _positive_int(value, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"model {option}={value!r}: give a whole number >= 1.")
    return int(value)


__all__ = ["LSTMWrapper", "encode_prev_actions", "prev_action_size"]
