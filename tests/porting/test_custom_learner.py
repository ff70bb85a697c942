"""A Learner subclass as RLlib's examples write one: PPOTorchLearner (RLlib's path), compute_loss_for_module()
extended with a term whose coefficient comes from config.learner_config_dict, a metric logged under the module."""
import torch

from relayrl.algorithms.ppo import PPOConfig
from relayrl.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner


class WeightRegularizedPPOLearner(PPOTorchLearner):
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        mean_weight = torch.mean(torch.stack([w.mean() for w in self.get_parameters(self.module[module_id])]))
        self.metrics.log_value(key=(module_id, "mean_weight"), value=mean_weight, window=1)
        return loss + config.learner_config_dict["regularizer_coeff"] * mean_weight


def test_a_learner_subclass_reads_learner_config_dict_and_logs_its_metric():
    config = (PPOConfig().environment("CartPole-v1")
              .training(train_batch_size=256, minibatch_size=64, num_epochs=1)
              .learners(learner_class=WeightRegularizedPPOLearner, learner_config_dict={"regularizer_coeff": 0.02})
              .debugging(seed=0))
    assert config.learner_config_dict == {"regularizer_coeff": 0.02}
    algo = config.build_algo()
    try:
        learner = algo.learner_group._learner
        assert isinstance(learner, WeightRegularizedPPOLearner)
        stats = algo.train()["learners"]["default_policy"]
        weights = torch.stack([w.mean() for w in learner.get_parameters(learner.module["default_policy"])]).mean()
        assert abs(stats["mean_weight"] - float(weights)) < 0.05  # logged from the update's weights
    finally:
        algo.stop()
