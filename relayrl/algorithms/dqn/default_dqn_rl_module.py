"""DQN's default RLModule: an MLP encoder and a Q head (dueling: value + advantage streams), plus target copies.

Outputs:
- forward_inference / forward_exploration: `action_dist_inputs` = Q-values (B, num_actions); the
  categorical inference distribution's deterministic action is argmax Q; exploration (epsilon-greedy)
  works on these Q-values in the EnvRunner's module-to-env pipeline.
- forward_train: `qf_preds` = Q(obs); with double Q and `new_obs` in the batch also
  `qf_next_preds` = Q(new_obs) from the online net, without a gradient (next_q_pass.py: a separate no-grad
  pass on the CPU, one pass over both on a GPU).
- forward_target: `qf_preds` = Q_target(obs) (TargetNetworkAPI).

With `use_lstm=True` (recurrent_q_network.py) every column is (B, T, ...), every forward pass takes `state_in`
and returns `state_out`, and forward_train returns `qf_preds` for all T steps of the replayed sequences (the
Learner picks the bootstrap steps from them: no separate `qf_next_preds`).
"""
from typing import Any, Dict

import torch

from relayrl.algorithms.dqn.next_q_pass import separate_next_q_pass
from relayrl.algorithms.dqn.recurrent_q_network import RecurrentQNetwork
from relayrl.core.columns import Columns
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.modules.distributions import TorchCategorical
from relayrl.modules.encoders import make_encoder
from relayrl.modules.mlp import mlp, run_layers
from relayrl.modules.rl_module import RLModule
from relayrl.modules.space_checks import check_action_space
from relayrl.modules.target_network_api import (
    TargetNetworkAPI,
    is_target_key,
    make_target_network,
)

QF_PREDS = "qf_preds"
QF_NEXT_PREDS = "qf_next_preds"
# Keys DQNConfig adds to model_config (RLlib's "auto-includes"); not DefaultModelConfig fields.
_DQN_MODEL_KEYS = ("dueling", "double_q", "burn_in_len")


def dueling_q_values(values: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """Q = V + A - mean_a(A): the mean-centred advantages make V and A identifiable."""
    return values + advantages - advantages.mean(dim=-1, keepdim=True)


class DefaultDQNTorchRLModule(RecurrentQNetwork, RLModule, TargetNetworkAPI):
    """Q-network MLP (or CNN) for Box observations and Discrete actions; an LSTM on top with use_lstm."""

    def setup(self) -> None:
        model_config = dict(self.model_config)
        self.uses_dueling = bool(model_config.pop("dueling", True))
        self.uses_double_q = bool(model_config.pop("double_q", True))
        burn_in_len = int(model_config.pop("burn_in_len", 0))
        cfg = DefaultModelConfig.from_dict(model_config)
        name = type(self).__name__
        self._recurrent = cfg.use_lstm
        check_action_space(self.action_space, name, allow_box=False)
        self.action_dist_cls = TorchCategorical
        num_actions = int(self.action_space.n)

        head_init = dict(kernel_initializer=cfg.head_fcnet_kernel_initializer,
                         kernel_initializer_kwargs=cfg.head_fcnet_kernel_initializer_kwargs,
                         bias_initializer=cfg.head_fcnet_bias_initializer,
                         bias_initializer_kwargs=cfg.head_fcnet_bias_initializer_kwargs)
        if self._recurrent:  # tokenizer + LSTM, PPO's encoder (recurrent_q_network.py)
            embed_dim = self.setup_recurrent_q(cfg, name, burn_in_len)
        else:
            self.encoder, embed_dim = make_encoder(self.observation_space, cfg, name)  # MLP, or CNN for images
        # `af`: the advantage stream (dueling) or the whole Q head; `vf`: the value stream (dueling only).
        self.af = mlp(embed_dim, cfg.head_fcnet_hiddens, cfg.head_fcnet_activation, num_actions, **head_init)
        self.vf = (mlp(embed_dim, cfg.head_fcnet_hiddens, cfg.head_fcnet_activation, 1, **head_init)
                   if self.uses_dueling else None)

    # -- Q-values ------------------------------------------------------------------------------
    # Layers run as plain torch calls (run_layers): nn.Module dispatch dominates a small MLP's cost.
    def _q_values(self, obs, encoder, af, vf) -> torch.Tensor:
        return self._heads(run_layers(obs, encoder), af, vf)

    @staticmethod
    def _heads(embeddings, af, vf) -> torch.Tensor:
        advantages = run_layers(embeddings, af)
        if vf is None:
            return advantages
        return dueling_q_values(run_layers(embeddings, vf), advantages)

    def get_initial_state(self) -> Dict[str, Any]:
        return self.recurrent_initial_state() if self._recurrent else {}

    def compute_q_values(self, batch: Dict[str, Any]) -> Dict[str, torch.Tensor]:
        """RLlib's QNetAPI: {"qf_preds": Q(obs)} from the online net (recurrent: also "state_out")."""
        if self._recurrent:
            q_values, state_out = self.recurrent_q_values(batch, self.encoder, self.af, self.vf)
            return {QF_PREDS: q_values, Columns.STATE_OUT: state_out}
        return {QF_PREDS: self._q_values(batch[Columns.OBS], self.encoder, self.af, self.vf)}

    def _forward(self, batch, **kwargs):
        if self._recurrent:
            q_values, state_out = self.recurrent_q_values(batch, self.encoder, self.af, self.vf)
            return {Columns.ACTION_DIST_INPUTS: q_values, Columns.STATE_OUT: state_out}
        q_values = self._q_values(batch[Columns.OBS], self.encoder, self.af, self.vf)
        return {Columns.ACTION_DIST_INPUTS: q_values}

    def _forward_train(self, batch, **kwargs):
        if self._recurrent:  # whole sequences; the first burn_in_len steps only warm up the state
            q_values, state_out = self.recurrent_q_values(batch, self.encoder, self.af, self.vf,
                                                          burn_in=self.burn_in_len)
            return {QF_PREDS: q_values, Columns.STATE_OUT: state_out}
        obs = batch[Columns.OBS]
        if self.uses_double_q and Columns.NEXT_OBS in batch:
            if separate_next_q_pass(obs):  # CPU: backward skips the new_obs rows (next_q_pass.py)
                q_values = self._q_values(obs, self.encoder, self.af, self.vf)
                with torch.no_grad():
                    q_next = self._q_values(batch[Columns.NEXT_OBS], self.encoder, self.af, self.vf)
                return {QF_PREDS: q_values, QF_NEXT_PREDS: q_next}
            # GPU: one pass over obs and new_obs together, half the kernel launches of two passes.
            both = self._q_values(torch.cat([obs, batch[Columns.NEXT_OBS]]), self.encoder, self.af, self.vf)
            q_values, q_next = both.split(obs.shape[0])
            return {QF_PREDS: q_values, QF_NEXT_PREDS: q_next}
        return {QF_PREDS: self._q_values(obs, self.encoder, self.af, self.vf)}

    # -- TargetNetworkAPI ----------------------------------------------------------------------
    def make_target_networks(self) -> None:
        self._target_encoder = make_target_network(self.encoder)
        self._target_af = make_target_network(self.af)
        self._target_vf = make_target_network(self.vf) if self.vf is not None else None

    def get_target_network_pairs(self):
        pairs = [(self.encoder, self._target_encoder), (self.af, self._target_af)]
        if self.vf is not None:
            pairs.append((self.vf, self._target_vf))
        return pairs

    def forward_target(self, batch: Dict[str, Any], **kwargs) -> Dict[str, torch.Tensor]:
        if not hasattr(self, "_target_encoder"):
            raise RuntimeError(f"{type(self).__name__}.forward_target() needs make_target_networks() first "
                               "(the Learner calls it; EnvRunner modules have no target networks).")
        if self._recurrent:
            q_values, state_out = self.recurrent_q_values(batch, self._target_encoder, self._target_af,
                                                          self._target_vf)
            return {QF_PREDS: q_values, Columns.STATE_OUT: state_out}
        return {QF_PREDS: self._q_values(batch[Columns.OBS], self._target_encoder, self._target_af,
                                         self._target_vf)}

    # -- state: EnvRunners get and set only the online nets ------------------------------------
    # Weights move learner -> EnvRunner after every training_step; walking the module tree with
    # state_dict() each time cost more than the copies. The Parameter objects themselves are kept
    # (they survive .to() and in-place updates); rebuilt when target networks are added.
    def _named_tensors(self):
        cache = self.__dict__.get("_state_cache")
        num_targets = len(self.get_target_network_pairs()) if hasattr(self, "_target_encoder") else 0
        if cache is None or cache[0] != num_targets:
            cache = (num_targets, list(self.state_dict(keep_vars=True).items()))
            self.__dict__["_state_cache"] = cache
        return cache[1]

    def get_state(self, components=None, *, not_components=None, inference_only: bool = False, **kwargs):
        return {k: v.detach().cpu().numpy().copy() for k, v in self._named_tensors()
                if not (inference_only and is_target_key(k))}

    def _live_tensors(self):
        return dict(self._named_tensors())

    def _state_to_load(self, state):
        if not any(is_target_key(k) for k, _ in self._named_tensors()):  # no targets yet (EnvRunner copies)
            state = {k: v for k, v in state.items() if not is_target_key(k)}
        return state


__all__ = ["DefaultDQNTorchRLModule", "dueling_q_values", "QF_PREDS", "QF_NEXT_PREDS"]
