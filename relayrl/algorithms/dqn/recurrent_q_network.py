"""The recurrent half of DQN's default module when `use_lstm=True` (R2D2-style Q-learning on sequences).

The encoder is the same `LSTMEncoder` as PPO's (tokenizer MLP/CNN, then one LSTM layer); the dueling or plain
Q head reads its output at every step. State per item is `{"h", "c"}` of shape (1, cell), so a batch holds
(B, 1, cell). Columns are (B, T, ...): T = 1 on the env runners (one forward pass per vector step), the
replayed sequence's length on the Learner, where whole sequences run in one `nn.LSTM` call.

Burn-in (`burn_in_len`, DQNConfig's option, passed through model_config): on the Learner the first
`burn_in_len` steps of every sequence only warm up the state, without gradients (R2D2's burn-in); the
Q-values there are computed but the loss masks them out.
"""
from typing import Any, Dict, Tuple

import torch

from relayrl.core.columns import Columns
from relayrl.modules.lstm_encoder import LSTMEncoder, initial_state_batch, refuse_prev_action_and_reward


class RecurrentQNetwork:
    """Mixin for the DQN module: `setup_recurrent_q()` builds the encoder; `recurrent_q_values()` runs it.

    The host module provides `af`, `vf` (None without dueling) and `_heads(features, af, vf)`.
    """

    def setup_recurrent_q(self, cfg, module_name: str, burn_in_len: int) -> int:
        """Build the LSTM encoder; returns the features' size (the heads' input)."""
        refuse_prev_action_and_reward(cfg, module_name)
        if not 0 <= burn_in_len < cfg.max_seq_len:
            raise ValueError(f"{module_name}: burn_in_len={burn_in_len} must be >= 0 and smaller than "
                             f"max_seq_len={cfg.max_seq_len}. Fix: lower burn_in_len or raise max_seq_len.")
        self.burn_in_len = int(burn_in_len)
        self.encoder = LSTMEncoder(self.observation_space, cfg, module_name)
        return self.encoder.cell_size

    def recurrent_initial_state(self) -> Dict[str, Any]:
        return self.encoder.initial_state()

    def _state_in(self, batch) -> Dict[str, Any]:
        state = batch.get(Columns.STATE_IN)
        if state is None:  # a user's or an export's call without state: the initial state
            obs = batch[Columns.OBS]
            state = initial_state_batch(self.get_initial_state(), obs.shape[0], obs)
        return state

    def recurrent_q_values(self, batch, encoder, af, vf, *, burn_in: int = 0) -> Tuple[torch.Tensor, Dict]:
        """Q-values (B, T, num_actions) and the state after step T, from `batch["state_in"]`.

        The first `burn_in` steps run without gradients: gradients reach neither those steps' inputs nor the
        state they hand on."""
        obs, state = batch[Columns.OBS], self._state_in(batch)
        burn_in = min(burn_in, obs.shape[1] - 1)
        if burn_in > 0:
            with torch.no_grad():
                warm, state = encoder(obs[:, :burn_in], state)
            rest, state_out = encoder(obs[:, burn_in:], {k: v.detach() for k, v in state.items()})
            features = torch.cat([warm, rest], dim=1)
        else:
            features, state_out = encoder(obs, state)
        return self._heads(features, af, vf), state_out


__all__ = ["RecurrentQNetwork"]
