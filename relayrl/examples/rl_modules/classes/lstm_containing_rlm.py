"""`LSTMContainingRLModule` (RLlib's example class): a custom stateful RLModule, an LSTM followed by dense layers
with a policy and a value head, for PPO, IMPALA or APPO on partially observable tasks (e.g. StatelessCartPole).

What makes a module stateful: `get_initial_state()` returns its state (numpy, without the batch axis), every
forward pass reads `batch["state_in"]` (the state before the batch's first time step, `(B, ...)` per leaf) from
inputs with a time axis (`(B, T, ...)`) and returns `"state_out"`. The pipelines do the rest: they add the time
axis, feed each episode its latest state (the initial state at an episode's start), and cut the train batch into
sequences of `model_config["max_seq_len"]` steps.

model_config: `lstm_cell_size` (256), `dense_layers` ([128, 128]), `max_seq_len` (20).
`LSTMContainingRLModuleWithTargetNetwork` adds the target copies APPO needs (TargetNetworkAPI).
"""
from typing import Any, Dict, Optional

import numpy as np
import torch
from torch import nn

from relayrl.core.columns import Columns
from relayrl.modules.rl_module import TorchRLModule, ValueFunctionAPI
from relayrl.modules.target_network_api import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    TargetNetworkAPI,
    make_target_network,
)


class LSTMContainingRLModule(TorchRLModule, ValueFunctionAPI):
    def setup(self):
        in_size = self.observation_space.shape[0]
        self._lstm_cell_size = self.model_config.get("lstm_cell_size", 256)
        self._lstm = nn.LSTM(in_size, self._lstm_cell_size, batch_first=True)
        layers, size = [], self._lstm_cell_size
        for out_size in self.model_config.get("dense_layers", [128, 128]):
            layers += [nn.Linear(size, out_size), nn.ReLU()]
            size = out_size
        self._fc_net = nn.Sequential(*layers)
        self._pi_head = nn.Linear(size, self.action_space.n)
        self._values = nn.Linear(size, 1)

    def get_initial_state(self) -> Dict[str, np.ndarray]:
        zeros = np.zeros(self._lstm_cell_size, dtype=np.float32)
        return {"h": zeros, "c": zeros.copy()}

    def _forward(self, batch, **kwargs):
        embeddings, state_out = self._embeddings_and_state_out(batch)
        return {Columns.ACTION_DIST_INPUTS: self._pi_head(embeddings), Columns.STATE_OUT: state_out}

    def _forward_train(self, batch, **kwargs):
        # The embeddings go out too: the value function (compute_values) reuses them instead of a second LSTM pass.
        embeddings, state_out = self._embeddings_and_state_out(batch)
        return {Columns.ACTION_DIST_INPUTS: self._pi_head(embeddings), Columns.STATE_OUT: state_out,
                Columns.EMBEDDINGS: embeddings}

    def compute_values(self, batch: Dict[str, Any], embeddings: Optional[Any] = None):
        if embeddings is None:
            embeddings, _ = self._embeddings_and_state_out(batch)
        return self._values(embeddings).squeeze(-1)

    def _embeddings_and_state_out(self, batch):
        state_in = batch[Columns.STATE_IN]
        # nn.LSTM wants the state as (num_layers=1, B, cell).
        outputs, (h, c) = self._lstm(batch[Columns.OBS], (state_in["h"].unsqueeze(0), state_in["c"].unsqueeze(0)))
        return self._fc_net(outputs), {"h": h.squeeze(0), "c": c.squeeze(0)}


class LSTMContainingRLModuleWithTargetNetwork(LSTMContainingRLModule, TargetNetworkAPI):
    """With frozen copies of the LSTM, the dense layers and the policy head, which APPO's loss reads."""

    def make_target_networks(self):
        self._target_lstm = make_target_network(self._lstm)
        self._target_fc_net = make_target_network(self._fc_net)
        self._target_pi_head = make_target_network(self._pi_head)

    def get_target_network_pairs(self):
        return [(self._lstm, self._target_lstm), (self._fc_net, self._target_fc_net),
                (self._pi_head, self._target_pi_head)]

    def forward_target(self, batch, **kwargs):
        state_in = batch[Columns.STATE_IN]
        with torch.no_grad():
            outputs, _ = self._target_lstm(batch[Columns.OBS], (state_in["h"].unsqueeze(0),
                                                                 state_in["c"].unsqueeze(0)))
            return {TARGET_NETWORK_ACTION_DIST_INPUTS: self._target_pi_head(self._target_fc_net(outputs))}
