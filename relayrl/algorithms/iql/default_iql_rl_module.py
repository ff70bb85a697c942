"""IQL's default RLModule: SAC's policy, twin critics and their targets, plus a state-value network V(s)
(`vf_encoder`, `vf`: the critics' layers, one output), as RLlib's DefaultIQLRLModule.

Its training pass runs each network once on the batch and nothing else: the policy at s (the loss rates the
logged actions, IQL samples none), each critic at (s, a), the target critics at (s, a) and V at s, plus V at s'
without autograd. Box actions: SAC's tanh-squashed Gaussian. Discrete actions (which RLlib's IQL refuses): SAC's
categorical policy and Q(s) networks with one output per action, read at the logged action.
"""
import torch

from relayrl.algorithms.sac.default_sac_rl_module import QF_PREDS, QF_TWIN_PREDS, DefaultSACTorchRLModule
from relayrl.core.columns import Columns
from relayrl.modules.mlp import run_layers
from relayrl.modules.rl_module import ValueFunctionAPI
from relayrl.modules.space_checks import flat_obs_dim

# forward_train outputs (RLlib's names)
QF_TARGET_PREDS = "qf_target_preds"  # min_i Q_target_i(s, a_data) (no gradient)
VF_PREDS_NEXT = "vf_preds_next"  # V(s') (no gradient)


class DefaultIQLTorchRLModule(DefaultSACTorchRLModule, ValueFunctionAPI):
    def setup(self) -> None:
        super().setup()
        if self.inference_only:
            return
        obs_dim = None if self._images else flat_obs_dim(self.observation_space, self._name)
        self.vf_encoder, self.vf = self._encoder_and_head(obs_dim, 1)

    def compute_values(self, batch, embeddings=None):
        """V(s) for batch["obs"]: [B] (ValueFunctionAPI)."""
        return run_layers(batch[Columns.OBS], self.vf_encoder, self.vf).squeeze(-1)

    def _forward_train(self, batch, **kwargs):
        obs, actions = batch[Columns.OBS], batch[Columns.ACTIONS]
        out = {Columns.ACTION_DIST_INPUTS: run_layers(obs, self.pi_encoder, self.pi)}
        if self._discrete:
            taken = actions.long().unsqueeze(-1)
            q_values = [q.gather(-1, taken).squeeze(-1) for q in self._q_values(obs)]
            with torch.no_grad():
                target = [q.gather(-1, taken).squeeze(-1) for q in self._q_values(obs, target=True)]
        else:
            q_values = self._q_values(obs, actions)
            with torch.no_grad():
                target = self._q_values(obs, actions, target=True)
        out[QF_PREDS] = q_values[0]
        if self.twin_q:
            out[QF_TWIN_PREDS] = q_values[1]
        out[QF_TARGET_PREDS] = target[0] if len(target) == 1 else torch.min(target[0], target[1])
        out[Columns.VF_PREDS] = self.compute_values(batch)
        with torch.no_grad():
            out[VF_PREDS_NEXT] = self.compute_values({Columns.OBS: batch[Columns.NEXT_OBS]})
        return out


__all__ = ["DefaultIQLTorchRLModule", "QF_TARGET_PREDS", "VF_PREDS_NEXT"]
