"""MARWIL's Learner: the logged actions' log-likelihood weighted by exp(beta * advantage / c), plus a value loss.

Its Learner pipeline is the default one with RLlib's MARWIL pieces: each episode gets one artificial step
(AddOneTsToEpisodesAndTruncate, so its last observation gets a value), the next observations
(AddNextObservationsFromEpisodesToTrainBatch) and GAE's value targets (lambda_ = 1: discounted returns, bootstrapped
where an episode chunk or a transition row ends without terminating). With beta = 0 (BC) the advantage weights are 1
and the value pieces are left out.

The advantage is value_target - V(s); c^2 is a moving average of the squared advantages
(moving_average_sqd_adv_norm_start, moving_average_sqd_adv_norm_update_rate), kept per module and checkpointed.
"""
from typing import Dict

import torch

from relayrl.connectors.learner.add_next_observations_from_episodes_to_train_batch import insert_after_observations
from relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate import AddOneTsToEpisodesAndTruncate
from relayrl.connectors.learner.general_advantage_estimation import GeneralAdvantageEstimation
from relayrl.core.columns import Columns
from relayrl.learner.learner import Learner, possibly_masked_mean
from relayrl.ops.explained_variance import explained_variance

MOVING_AVG_SQD_ADV_NORM = "moving_avg_sqd_adv_norm"


class MARWILLearner(Learner):
    PER_MODULE_STATE = ("moving_avg_sqd_adv_norms",)  # checkpointed (and checked) per module id

    def build(self) -> None:
        super().build()
        pipeline = self._learner_connector
        if self.config.add_default_connectors_to_learner_pipeline:
            insert_after_observations(pipeline)
            if self.config.beta > 0:
                pipeline.prepend(AddOneTsToEpisodesAndTruncate())
                pipeline.append(GeneralAdvantageEstimation(gamma=self.config.gamma, lambda_=self.config.lambda_))
        start = float(self.config.moving_average_sqd_adv_norm_start)
        self.moving_avg_sqd_adv_norms: Dict[str, torch.Tensor] = {
            mid: torch.tensor(start, device=self.device) for mid in self.module.keys()}

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        mean = possibly_masked_mean(batch)
        dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        logp = dist.logp(batch[Columns.ACTIONS])
        stats = {}
        if config.beta == 0.0:
            weights, vf_loss = 1.0, None
        else:
            if Columns.VALUE_TARGETS not in batch:
                raise KeyError("MARWIL's train batch lacks `value_targets`: keep add_default_connectors_to_learner_"
                               "pipeline=True (it adds GeneralAdvantageEstimation) or add a piece that writes them.")
            values = module.compute_values(batch, embeddings=fwd_out.get(Columns.EMBEDDINGS))
            advantages = batch[Columns.VALUE_TARGETS] - values
            squared_mean = mean(advantages.pow(2))
            vf_loss = 0.5 * squared_mean
            norm = self.moving_avg_sqd_adv_norms[module_id]
            norm = norm + config.moving_average_sqd_adv_norm_update_rate * (squared_mean.detach() - norm)
            self.moving_avg_sqd_adv_norms[module_id] = norm
            weights = torch.exp(config.beta * advantages / (1e-8 + norm.sqrt())).detach()
            stats.update({"vf_loss": vf_loss, MOVING_AVG_SQD_ADV_NORM: norm,
                          "vf_explained_var": explained_variance(batch[Columns.VALUE_TARGETS], values.detach())})
        if config.bc_logstd_coeff > 0.0:
            logp = logp + config.bc_logstd_coeff * _log_std_term(dist)
        policy_loss = -mean(weights * logp)
        total_loss = policy_loss if vf_loss is None else policy_loss + config.vf_coeff * vf_loss
        self.log_stats(module_id, {"policy_loss": policy_loss, "total_loss": total_loss, **stats})
        return total_loss

    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state()
        state["moving_avg_sqd_adv_norms"] = {mid: float(v) for mid, v in self.moving_avg_sqd_adv_norms.items()}
        return state

    def set_state(self, state):
        super().set_state(state)
        for mid, value in state.get("moving_avg_sqd_adv_norms", {}).items():
            self.moving_avg_sqd_adv_norms[mid] = torch.tensor(float(value), device=self.device)


def _log_std_term(dist) -> torch.Tensor:
    """The mean log-std over the action dimensions (a Gaussian's; RLlib's bc_logstd_coeff term)."""
    log_std = getattr(dist, "log_std", None)
    if log_std is None:
        raise ValueError("bc_logstd_coeff > 0 needs a Gaussian action distribution (Box actions); set it to 0.")
    return log_std.mean(-1)


MARWILTorchLearner = MARWILLearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["MARWILLearner", "MARWILTorchLearner"]
