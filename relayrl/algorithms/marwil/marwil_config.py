"""MARWILConfig: MARWIL's options (added to training()) with RLlib's names and defaults."""
from __future__ import annotations

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import FRACTION, NON_NEGATIVE_FLOAT, POSITIVE_FLOAT, Option, float_between

__all__ = ["MARWILConfig", "RLLIB_MARWIL_DEFAULTS"]

# RLlib's MARWIL (and BC) defaults where relayrl's differ: `MARWILConfig().update_from_dict(RLLIB_MARWIL_DEFAULTS)`
# reproduces an RLlib config (then your builder calls).
RLLIB_MARWIL_DEFAULTS = {"lr": 1e-4, "train_batch_size": 2000}


class MARWILConfig(AlgorithmConfig):
    """Config for MARWIL: `MARWILConfig().offline_data(input_=[path]).environment("CartPole-v1")`."""

    READS_OFFLINE_DATA = True
    TRAINS_ONE_MODULE_OFFLINE = True  # multi_agent(policies={"main"}): the rows train "main" (offline_multi_agent.py)

    _OPTIONS = (
        Option("beta", 1.0, "Scale of the advantages in the exponential weights of the logged actions; 0 is "
               "behaviour cloning.", "training", float_between(0.0, 1.0), mutable=True),
        Option("bc_logstd_coeff", 0.0, "Weight of a bonus for the Gaussian's log-std (Box actions), for more "
               "exploration.", "training", NON_NEGATIVE_FLOAT, mutable=True),
        Option("moving_average_sqd_adv_norm_update_rate", 1e-8, "Rate of the moving average of the squared "
               "advantages (c^2) the advantages are divided by.", "training", FRACTION, mutable=True),
        Option("moving_average_sqd_adv_norm_start", 100.0, "Initial value of that moving average.", "training",
               POSITIVE_FLOAT),
        Option("vf_coeff", 1.0, "Weight of the value loss in the total loss.", "training", NON_NEGATIVE_FLOAT,
               mutable=True),
        Option("lambda_", 1.0, "GAE lambda of the value targets (1.0: discounted returns).", "training", FRACTION,
               key="lambda", mutable=True),
    )
    # relayrl's defaults: lr 1e-3 and 256 timesteps per update (d3rlpy's BC learning rate, its and SAC's usual
    # batch): BC on 50k expert CartPole steps reaches an evaluation return of 400 in ~250 updates, where RLlib's
    # lr 1e-4 and 2000-step batches (RLLIB_MARWIL_DEFAULTS) were at 110 after 300 (docs/offline.md). As RLlib's: no
    # gradient clipping, separate policy and value networks of RLlib's default model (two 256-unit tanh layers).
    _DEFAULTS = {"lr": 1e-3, "train_batch_size": 256, "grad_clip": None}
    _MODEL_CONFIG_DEFAULTS = {"vf_share_layers": False}

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultPPOTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.marwil.marwil_learner import MARWILLearner

        return MARWILLearner
