"""PPO's Learner: the clipped-surrogate loss, the clipped value loss, entropy and the adaptive KL penalty."""
from typing import Any, Dict

import torch

from relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate import (
    AddOneTsToEpisodesAndTruncate,
)
from relayrl.connectors.learner.general_advantage_estimation import (
    GeneralAdvantageEstimation,
)
from relayrl.core.columns import Columns
from relayrl.core.schedules import Scheduler
from relayrl.learner.learner import Learner, possibly_masked_mean
from relayrl.ops.explained_variance import explained_variance as _explained_variance


class PPOLearner(Learner):
    PER_MODULE_STATE = ("curr_kl_coeffs",)  # checkpointed (and checked) per module id

    def build(self) -> None:
        super().build()
        if self.config.add_default_connectors_to_learner_pipeline:
            self._learner_connector.prepend(AddOneTsToEpisodesAndTruncate())
            self._learner_connector.append(GeneralAdvantageEstimation(gamma=self.config.gamma,
                                                                      lambda_=self.config.lambda_))
        self.curr_kl_coeffs = {mid: self.config.kl_coeff for mid in self.module.keys()}
        self._value_fits = {}  # module_id -> [(value targets, predictions, loss mask)] of this update
        self._set_entropy_coeff(self.config.entropy_coeff, 0)
        self.when_config_changes("entropy_coeff", self._set_entropy_coeff)
        self.when_config_changes("kl_coeff", self._restart_kl_coeffs)

    def _set_entropy_coeff(self, entropy_coeff, timestep: int) -> None:
        self.entropy_coeff_scheduler = Scheduler(entropy_coeff)
        self._entropy_coeff = self.entropy_coeff_scheduler.get(timestep)

    def _restart_kl_coeffs(self, kl_coeff: float, timestep: int) -> None:
        self.curr_kl_coeffs = dict.fromkeys(self.curr_kl_coeffs, kl_coeff)

    def before_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        super().before_gradient_based_update(timesteps=timesteps)
        self._entropy_coeff = self.entropy_coeff_scheduler.get(timesteps.get("num_env_steps_sampled_lifetime", 0))
        self._value_fits = {}  # left over only if the previous update raised (e.g. a NaN gradient)

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        for column in (Columns.ADVANTAGES, Columns.VALUE_TARGETS, Columns.ACTION_LOGP):
            if column not in batch:
                raise KeyError(
                    f"PPO's train batch lacks `{column}`. Keep add_default_connectors_to_learner_pipeline=True "
                    "(it adds GeneralAdvantageEstimation) or add a Learner piece that writes it."
                )
        module = self.module[module_id]
        mean = possibly_masked_mean(batch)
        dist_cls = module.get_train_action_dist_cls()
        curr_dist = dist_cls.from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        logp_ratio = torch.exp(curr_dist.logp(batch[Columns.ACTIONS]) - batch[Columns.ACTION_LOGP])

        advantages = batch[Columns.ADVANTAGES]
        surrogate = torch.min(advantages * logp_ratio,
                              advantages * torch.clamp(logp_ratio, 1 - config.clip_param, 1 + config.clip_param))

        # Terms that cannot change the loss (a zero entropy coefficient, an infinite value clip) are left
        # out of the autograd graph: same loss and gradients, fewer kernels per minibatch.
        per_row = -surrogate
        if config.use_critic:
            values = module.compute_values(batch, embeddings=fwd_out.get(Columns.EMBEDDINGS))
            vf_loss = torch.pow(values - batch[Columns.VALUE_TARGETS], 2.0)
            clip = config.vf_clip_param
            vf_loss_clipped = vf_loss if clip == float("inf") else torch.clamp(vf_loss, 0, clip)
            per_row = per_row + config.vf_loss_coeff * vf_loss_clipped
        else:
            values = vf_loss = vf_loss_clipped = torch.zeros((), device=advantages.device)
        entropy = None
        if self._entropy_coeff != 0:
            entropy = curr_dist.entropy()
            per_row = per_row - self._entropy_coeff * entropy

        total_loss = mean(per_row)
        if config.use_kl_loss:
            prev_dist = dist_cls.from_logits(batch[Columns.ACTION_DIST_INPUTS])
            mean_kl = mean(prev_dist.kl(curr_dist))
            total_loss = total_loss + self.curr_kl_coeffs[module_id] * mean_kl
        else:
            mean_kl = torch.zeros((), device=advantages.device)

        with torch.no_grad():  # reported only: no autograd graph for these
            stats = {
                "policy_loss": mean(-surrogate),
                "vf_loss": mean(vf_loss_clipped),
                "vf_loss_unclipped": mean(vf_loss),
                "entropy": mean(curr_dist.entropy() if entropy is None else entropy),
                "mean_kl_loss": mean_kl,
                "total_loss": total_loss,
            }
        if config.use_critic:
            self._keep_value_fit(module_id, batch[Columns.VALUE_TARGETS], values.detach(), batch.get(Columns.LOSS_MASK))
        self.log_stats(module_id, stats)
        return total_loss

    def _keep_value_fit(self, module_id: str, targets, predictions, mask) -> None:
        """Kept per minibatch (no work here); reduced once per update in after_gradient_based_update."""
        self._value_fits.setdefault(module_id, []).append((targets, predictions, mask))

    def after_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        """Adapt the KL coefficient: x1.5 when the KL overshoots 2*kl_target, x0.5 below kl_target/2."""
        super().after_gradient_based_update(timesteps=timesteps)
        for module_id, fits in self._value_fits.items():
            targets, predictions, masks = zip(*fits)
            mask = None if masks[0] is None else torch.cat(masks)
            self.log_stats(module_id, {"vf_explained_var": _explained_variance(torch.cat(targets),
                                                                               torch.cat(predictions), mask)})
        self._value_fits = {}
        for module_id in self.modules_in_update():
            if self.config.use_kl_loss:
                kl = self.peek_stat(module_id, "mean_kl_loss", default=None)
                if kl is not None:
                    if kl > 2.0 * self.config.kl_target:
                        self.curr_kl_coeffs[module_id] *= 1.5
                    elif kl < 0.5 * self.config.kl_target:
                        self.curr_kl_coeffs[module_id] *= 0.5
            self.log_stats(module_id, {"curr_kl_coeff": self.curr_kl_coeffs[module_id],
                                       "curr_entropy_coeff": self._entropy_coeff})

    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state()
        state["curr_kl_coeffs"] = dict(self.curr_kl_coeffs)
        return state

    def set_state(self, state):
        super().set_state(state)
        self.curr_kl_coeffs.update(state.get("curr_kl_coeffs", {}))


PPOTorchLearner = PPOLearner  # RLlib's torch class name (relayrl's Learners are torch)
