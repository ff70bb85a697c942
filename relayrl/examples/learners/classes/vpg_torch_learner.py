"""`VPGTorchLearner`: vanilla policy gradient (REINFORCE without a baseline), RLlib's example of a custom loss
in a Learner subclass: `build()` adds the Learner connector piece the loss needs, `compute_loss_for_module()`
computes the loss of one module from its train batch and forward outputs."""
import torch

from relayrl.connectors.learner.compute_returns_to_go import ComputeReturnsToGo
from relayrl.core.columns import Columns
from relayrl.learner.learner import Learner


class VPGTorchLearner(Learner):
    def build(self) -> None:
        super().build()
        # The loss weighs each action by the discounted return that followed it: put those into the batch first.
        if self.config.add_default_connectors_to_learner_pipeline:
            self._learner_connector.prepend(ComputeReturnsToGo(gamma=self.config.gamma))

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        action_dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        logp = action_dist.logp(batch[Columns.ACTIONS])
        returns_to_go = batch[Columns.RETURNS_TO_GO]
        self.log_stats(module_id, {"returns_to_go_mean": returns_to_go.mean()})
        return -torch.mean(logp * returns_to_go)

    def after_gradient_based_update(self, *, timesteps) -> None:
        super().after_gradient_based_update(timesteps=timesteps)
        # A cheap fingerprint of the weights: with several Learners (DDP) every one must report the same value.
        for module_id in self.modules_in_update():
            with torch.no_grad():
                weights = self.get_parameters(self.module[module_id])
                mean = torch.stack([w.mean() for w in weights]).mean().item() if weights else float("nan")
            self.metrics.log_value((module_id, "mean_weight"), mean, window=1)
