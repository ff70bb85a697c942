"""IQL's Learner: implicit Q-learning (Kostrikov et al. 2021) from single logged transitions.

Three losses, each reaching only its own optimiser's parameters (so one backward pass serves all, as SAC's):

- value (`value_lr`): expectile regression of V(s) on min_i Q_target_i(s, a_data), weights |expectile - 1(u < 0)|
  of u = Q_target - V, so V learns an upper expectile of the logged actions' values without querying any other
  action;
- critics (`critic_lr`, each its own Adam): MSE of Q_i(s, a_data) to r + gamma (1 - terminated) V(s');
- policy (`actor_lr`): advantage-weighted regression on the logged actions,
  -exp(beta * (Q_target - V)) log pi(a_data|s), the weights clipped at 100 (RLlib's and the paper's).

The targets move by `tau` every `target_network_update_freq` timesteps (DQNLearner's rule; RLlib's IQL defaults:
a copy after every update). SAC's temperature (alpha) is not used: IQL registers no alpha optimiser.
"""
import math

import torch

from relayrl.algorithms.iql.default_iql_rl_module import QF_TARGET_PREDS, VF_PREDS_NEXT
from relayrl.algorithms.sac.default_sac_rl_module import QF_PREDS, QF_TWIN_PREDS
from relayrl.algorithms.sac.sac_learner import SACLearner
from relayrl.connectors.learner.add_next_observations_from_episodes_to_train_batch import insert_after_observations
from relayrl.core.columns import Columns
from relayrl.ops.q_learning import bootstrap_targets

MAX_ADVANTAGE_WEIGHT = 100.0
_LOG_MAX_WEIGHT = math.log(MAX_ADVANTAGE_WEIGHT)


class IQLLearner(SACLearner):
    OPTIMIZER_NETS = {**SACLearner.OPTIMIZER_NETS, "value": (("vf_encoder", "vf"), "value_lr")}

    def build(self) -> None:
        super().build()
        if self.config.add_default_connectors_to_learner_pipeline:
            insert_after_observations(self._learner_connector)

    def configure_optimizers_for_module(self, module_id: str, config=None) -> None:
        self.configure_network_optimizers(module_id, config or self.config)

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        # Value: asymmetric squared error of V(s) against the target critics' Q(s, a_data).
        diff = fwd_out[QF_TARGET_PREDS] - fwd_out[Columns.VF_PREDS]
        expectile_weights = torch.where(diff < 0, 1.0 - config.expectile, config.expectile)
        value_loss = (expectile_weights * diff.pow(2)).mean()

        # Policy: the logged actions' log-likelihood weighted by exp(beta * advantage), clipped (no gradient).
        advantages = diff.detach()
        weights = (config.beta * advantages).clamp(max=_LOG_MAX_WEIGHT).exp()
        dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        policy_loss = -(weights * dist.logp(batch[Columns.ACTIONS])).mean()

        # Critics: y = r + gamma (1 - terminated) V(s').
        targets = bootstrap_targets(batch[Columns.REWARDS], batch[Columns.TERMINATEDS], fwd_out[VF_PREDS_NEXT],
                                    gamma=config.gamma, n_step=1)
        critic_losses = {f"{name}_loss": (fwd_out[key] - targets).pow(2).mean()
                         for name, key in (("qf", QF_PREDS), ("qf_twin", QF_TWIN_PREDS)) if key in fwd_out}

        total_loss = value_loss + policy_loss + sum(critic_losses.values())
        self.log_stats(module_id, {"policy_loss": policy_loss, **critic_losses, "value_loss": value_loss,
                                   "total_loss": total_loss})
        self.log_row_stats(module_id, {"q": fwd_out[QF_PREDS], "v": fwd_out[Columns.VF_PREDS],
                                       "advantages": advantages, "weights": weights}, _iql_row_stats)
        return total_loss


def _iql_row_stats(rows):
    """Per-update statistics from stacked per-row tensors ([updates, rows]); see Learner.log_row_stats."""
    return {"qf_mean": rows["q"].mean(-1), "vf_mean": rows["v"].mean(-1),
            "advantage_mean": rows["advantages"].mean(-1), "advantage_weight_mean": rows["weights"].mean(-1),
            "advantage_weight_max": rows["weights"].amax(-1)}


IQLTorchLearner = IQLLearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["IQLLearner", "IQLTorchLearner", "MAX_ADVANTAGE_WEIGHT"]
