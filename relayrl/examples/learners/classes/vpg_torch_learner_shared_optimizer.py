"""`VPGTorchLearnerSharedOptimizer`: VPG with ONE optimizer over all modules, for a MultiRLModule whose policies
share an encoder (relayrl/examples/rl_modules/classes/vpg_using_shared_encoder_rlm.py). With one optimizer per
module, each would step the shared encoder in turn; one optimizer over all parameters steps it once per update,
with the gradients of every policy's loss summed into it."""
from relayrl.core.columns import ALL_MODULES
from relayrl.examples.learners.classes.vpg_torch_learner import VPGTorchLearner

# torch.optim.Adam works too; relayrl's Adam is the same optimizer without its first-use import of torch._dynamo.
from relayrl.learner.optimizers import Adam


class VPGTorchLearnerSharedOptimizer(VPGTorchLearner):
    def configure_optimizers(self) -> None:
        params = [p for module in self.module.values() if self.rl_module_is_compatible(module)
                  for p in self.get_parameters(module)]
        # Registered for ALL_MODULES: the Learner steps it after each minibatch's backward pass over all losses.
        self.register_optimizer(module_id=ALL_MODULES, optimizer_name="shared_optimizer",
                                optimizer=Adam(params), params=params, lr_or_lr_schedule=self.config.lr,
                                lr_option="lr")
