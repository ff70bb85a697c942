"""`PPOTorchLearnerWithWeightRegularizerLoss`: PPO's loss plus a term of your own (RLlib's example of a custom
loss): override `compute_loss_for_module`, call the parent's for PPO's loss, and add to it. Settings for the
custom term come from `config.learners(learner_config_dict={...})` (or `training(...)`)."""
import torch

from relayrl.algorithms.ppo.ppo_learner import PPOLearner


class PPOTorchLearnerWithWeightRegularizerLoss(PPOLearner):
    """Adds `learner_config_dict["regularizer_coeff"]` times the mean of all the module's weights: even with a
    large learning rate, this keeps the weights small."""

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        ppo_loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        weights = self.get_parameters(self.module[module_id])
        mean_weight = torch.stack([w.mean() for w in weights]).mean()
        self.log_stats(module_id, {"mean_weight": mean_weight})
        return ppo_loss + config.learner_config_dict["regularizer_coeff"] * mean_weight
