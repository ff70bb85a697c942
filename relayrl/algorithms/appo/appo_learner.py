"""APPO's Learner: V-trace against a target policy, PPO's clipped surrogate, an optional KL term.

The target network (the policy's encoder and head) moves towards the current weights once
target_network_update_freq x circular_buffer_num_batches x circular_buffer_iterations_per_batch x
train_batch_size_per_learner env steps were trained since its last update (RLlib's unit), with `tau`.
"""
from typing import Any, Dict

import torch

from relayrl.algorithms.appo.default_appo_rl_module import TARGET_NETWORK_ACTION_DIST_INPUTS
from relayrl.algorithms.impala.impala_learner import WEIGHTS_SEQ_NO, IMPALALearner
from relayrl.core.columns import Columns
from relayrl.learner.learner import possibly_masked_mean
from relayrl.metrics import NUM_ENV_STEPS_TRAINED_LIFETIME
from relayrl.modules.target_network_api import TargetNetworkAPI, make_target_networks, update_target_networks
from relayrl.ops.vtrace import vtrace_on_chunks


class APPOLearner(IMPALALearner):
    PER_MODULE_STATE = ("curr_kl_coeffs", "last_target_update_ts", "num_target_updates")

    def build(self) -> None:
        super().build()
        make_target_networks(self.module)
        self.curr_kl_coeffs = {mid: self.config.kl_coeff for mid in self.module.keys()}
        self.when_config_changes("kl_coeff", lambda kl_coeff, timestep: self.curr_kl_coeffs.update(
            dict.fromkeys(self.curr_kl_coeffs, kl_coeff)))
        self.last_target_update_ts = {mid: 0 for mid in self.module.keys()}
        self.num_target_updates = {mid: 0 for mid in self.module.keys()}

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        mask = batch[Columns.LOSS_MASK].bool()
        masked_mean = possibly_masked_mean(batch)  # the loss's rows only (artificial rows may hold anything)

        dist_cls = module.get_train_action_dist_cls()
        current_dist = dist_cls.from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        with torch.no_grad():
            target_dist = dist_cls.from_logits(module.forward_target(batch)[TARGET_NETWORK_ACTION_DIST_INPUTS])
        actions, behaviour_logp = batch[Columns.ACTIONS], batch[Columns.ACTION_LOGP]
        target_logp = target_dist.logp(actions)
        values = module.compute_values(batch, embeddings=fwd_out.get(Columns.EMBEDDINGS))
        vs, pg_advantages = vtrace_on_chunks(
            behaviour_logp, target_logp, batch[Columns.REWARDS], values, batch[Columns.TERMINATEDS], mask,
            gamma=config.gamma, clip_rho_threshold=config.vtrace_clip_rho_threshold,
            clip_pg_rho_threshold=config.vtrace_clip_pg_rho_threshold)

        # The samples came from the behaviour policy: weigh the ratio to the target policy back in (clipped).
        is_ratio = torch.clamp(torch.exp(behaviour_logp - target_logp), 0.0, config.target_worker_clipping)
        ratio = is_ratio * torch.exp(current_dist.logp(actions) - behaviour_logp)
        clipped = torch.clamp(ratio, 1 - config.clip_param, 1 + config.clip_param)
        surrogate = torch.min(pg_advantages * ratio, pg_advantages * clipped)

        pi_loss = masked_mean(-surrogate)
        vf_loss = masked_mean(0.5 * torch.pow(values - vs, 2.0))
        entropy = masked_mean(current_dist.entropy())
        total_loss = pi_loss + config.vf_loss_coeff * vf_loss - self._entropy_coeff * entropy
        if config.use_kl_loss:
            mean_kl = masked_mean(target_dist.kl(current_dist))
        else:
            mean_kl = torch.zeros((), device=mask.device)
        if config.use_kl_loss:
            total_loss = total_loss + self.curr_kl_coeffs[module_id] * mean_kl

        with torch.no_grad():
            mean_is = masked_mean(is_ratio)
            stats = {"policy_loss": pi_loss, "vf_loss": vf_loss, "entropy": entropy, "mean_kl_loss": mean_kl,
                     "curr_kl_coeff": self.curr_kl_coeffs[module_id], "curr_entropy_coeff": self._entropy_coeff,
                     "mean_IS": mean_is, "var_IS": masked_mean(torch.pow(is_ratio - mean_is, 2.0)),
                     "total_loss": total_loss}
            if WEIGHTS_SEQ_NO in batch:
                stats["diff_num_grad_updates_vs_sampler_policy"] = masked_mean(
                    self.weights_seq_no - batch[WEIGHTS_SEQ_NO].to(values.dtype))
        self.log_stats(module_id, stats)
        return total_loss

    def after_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        """Move the target networks when due; adapt the KL coefficient (x1.5 above 2x kl_target, x0.5 below half)."""
        super().after_gradient_based_update(timesteps=timesteps)
        cfg = self.config
        now = timesteps.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0)
        period = (cfg.target_network_update_freq * cfg.circular_buffer_num_batches
                  * cfg.circular_buffer_iterations_per_batch * cfg.train_batch_size_per_learner)
        for module_id in self.modules_in_update():
            module = self.module[module_id]
            if isinstance(module, TargetNetworkAPI) and now - self.last_target_update_ts[module_id] >= period:
                update_target_networks(module, cfg.tau)
                self.last_target_update_ts[module_id] = now
                self.num_target_updates[module_id] += 1
            if cfg.use_kl_loss:
                kl = self.peek_stat(module_id, "mean_kl_loss", default=None)
                if kl is not None and kl > 2.0 * cfg.kl_target:
                    self.curr_kl_coeffs[module_id] *= 1.5
                elif kl is not None and kl < 0.5 * cfg.kl_target:
                    self.curr_kl_coeffs[module_id] *= 0.5
            self.log_stats(module_id, {"num_target_updates": self.num_target_updates[module_id],
                                       "last_target_update_ts": self.last_target_update_ts[module_id]})

    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state(components, not_components=not_components, **kwargs)
        for name in self.PER_MODULE_STATE:
            state[name] = dict(getattr(self, name))
        return state

    def set_state(self, state):
        super().set_state(state)
        for name in self.PER_MODULE_STATE:
            getattr(self, name).update(state.get(name, {}))


APPOTorchLearner = APPOLearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["APPOTorchLearner", "APPOLearner"]
