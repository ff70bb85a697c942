"""The recurrent half of the default actor-critic modules (PPO, IMPALA, APPO) when `use_lstm=True`.

Layout as RLlib's `StatefulActorCriticEncoder`: with `vf_share_layers=True` one `LSTMEncoder` feeds both
heads and the state is `{"h", "c"}`; otherwise an actor and a critic encoder each keep their own state,
`{"actor": {"h", "c"}, "critic": {"h", "c"}}`. Every forward pass takes `state_in` and returns `state_out`;
columns are (B, T, ...) (T = 1 on the env runners, `max_seq_len` on the Learner) and whole sequences run
in one `nn.LSTM` call: no Python loop over time or sequences.
"""
from typing import Any, Dict

from relayrl.core.columns import Columns
from relayrl.modules.lstm_encoder import LSTMEncoder, initial_state_batch, refuse_prev_action_and_reward
from relayrl.modules.mlp import run_layers


class RecurrentActorCritic:
    """Mixin: `setup_recurrent()` builds the encoder(s); the `recurrent_*` methods are the forward passes.

    The host module provides `pi`, `vf`, `_dist_inputs(embeddings, logits)` and `vf_share_layers`.
    """

    def setup_recurrent(self, cfg, module_name: str) -> int:
        """Build the LSTM encoder(s); returns the features' size (the heads' input)."""
        refuse_prev_action_and_reward(cfg, module_name)
        # The runners must compute every state the Learner later starts a sequence from, the critic's
        # included: a recurrent module is never inference-only (RLlib's DefaultPPORLModule does the same).
        self.inference_only = False
        self.encoder = LSTMEncoder(self.observation_space, cfg, module_name)
        if not self.vf_share_layers:
            self.vf_encoder = LSTMEncoder(self.observation_space, cfg, module_name)
        return self.encoder.cell_size

    def get_initial_state(self) -> Dict[str, Any]:
        if getattr(self, "_recurrent", False):
            if self.vf_share_layers:
                return self.encoder.initial_state()
            return {"actor": self.encoder.initial_state(), "critic": self.vf_encoder.initial_state()}
        return {}

    def _state_in(self, batch) -> Dict[str, Any]:
        state = batch.get(Columns.STATE_IN)
        if state is None:
            obs = batch[Columns.OBS]
            state = initial_state_batch(self.get_initial_state(), obs.shape[0], obs)
        return state

    def recurrent_forward(self, batch, *, train: bool) -> Dict[str, Any]:
        """action_dist_inputs (B, T, ...) and state_out; train=True adds the critic's features (embeddings)."""
        obs, state_in = batch[Columns.OBS], self._state_in(batch)
        if self.vf_share_layers:
            features, state_out = self.encoder(obs, state_in)
            critic_features = features
        else:
            features, actor_out = self.encoder(obs, state_in["actor"])
            critic_features, critic_out = self.vf_encoder(obs, state_in["critic"])
            state_out = {"actor": actor_out, "critic": critic_out}
        out = {Columns.ACTION_DIST_INPUTS: self._dist_inputs(None, run_layers(features, self.pi)),
               Columns.STATE_OUT: state_out}
        if train:
            out[Columns.EMBEDDINGS] = critic_features
        return out

    def recurrent_values(self, batch, embeddings=None):
        """Values (B, T) from the critic's features, computed from `state_in` when not given."""
        if embeddings is None:
            state_in = self._state_in(batch)
            encoder, state = (self.encoder, state_in) if self.vf_share_layers else \
                (self.vf_encoder, state_in["critic"])
            embeddings, _ = encoder(batch[Columns.OBS], state)
        return run_layers(embeddings, self.vf).squeeze(-1)


__all__ = ["RecurrentActorCritic"]
