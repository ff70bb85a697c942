"""`PPOTorchLearnerWithSeparateVfOptimizer`: two optimizers per module, one for the policy and one for the value
function, each with its own learning rate (RLlib's example of overriding `configure_optimizers_for_module`).

PPO's loss is left as it is: it sums the policy, value and entropy terms, and with separate policy and value
networks (`DefaultModelConfig(vf_share_layers=False)`) each term's gradients reach only its own network, so each
optimizer steps its network with its own learning rate: `config.lr` for the policy,
`learner_config_dict["lr_vf"]` (default: `config.lr`) for the value function.
"""
from relayrl.algorithms.ppo.ppo_learner import PPOLearner

# torch.optim.Adam works too; relayrl's Adam is the same optimizer without its first-use import of torch._dynamo.
from relayrl.learner.optimizers import Adam


class PPOTorchLearnerWithSeparateVfOptimizer(PPOLearner):
    def configure_optimizers_for_module(self, module_id, config=None) -> None:
        config = config or self.config
        module = self.module[module_id]
        if not hasattr(module, "vf_encoder"):
            raise ValueError(f"{type(self).__name__} needs separate policy and value networks: set "
                             "config.rl_module(model_config=DefaultModelConfig(vf_share_layers=False)).")
        vf_params = self.get_parameters(module.vf_encoder) + self.get_parameters(module.vf)
        vf_ids = {id(p) for p in vf_params}
        pi_params = [p for p in self.get_parameters(module) if id(p) not in vf_ids]  # encoder, pi head, log-std
        self.register_optimizer(module_id=module_id, optimizer_name="optim_for_pi",
                                optimizer=Adam(pi_params), params=pi_params,
                                lr_or_lr_schedule=config.lr, lr_option="lr")
        self.register_optimizer(module_id=module_id, optimizer_name="optim_for_vf",
                                optimizer=Adam(vf_params), params=vf_params,
                                lr_or_lr_schedule=config.learner_config_dict.get("lr_vf", config.lr))
