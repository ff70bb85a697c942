"""APPOConfig: IMPALA's options plus PPO's clipped surrogate, a target network, a KL term and the circular buffer."""
from __future__ import annotations

from relayrl.algorithms.impala.impala_config import RLLIB_IMPALA_DEFAULTS, IMPALAConfig
from relayrl.algorithms.options import (
    BOOL,
    NON_NEGATIVE_FLOAT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    Option,
    float_between,
    only_default,
)

__all__ = ["APPOConfig", "RLLIB_APPO_DEFAULTS"]

# RLlib's APPO defaults where relayrl's differ: `APPOConfig().update_from_dict(RLLIB_APPO_DEFAULTS)`.
RLLIB_APPO_DEFAULTS = {**RLLIB_IMPALA_DEFAULTS, "target_network_update_freq": 2, "circular_buffer_num_batches": 8,
                       "model_config": {"fcnet_hiddens": [256, 256], "vf_share_layers": False}}


class APPOConfig(IMPALAConfig):
    """Config for APPO: `APPOConfig().environment("CartPole-v1").training(clip_param=0.4)`."""

    _OPTIONS = (
        Option("clip_param", 0.4, "Surrogate clip: the ratio to the target policy is clipped to "
               "[1 - clip_param, 1 + clip_param].", "training", POSITIVE_FLOAT, mutable=True),
        Option("use_kl_loss", False, "Add KL(target policy || current policy) with an adaptive coefficient.",
               "training", BOOL),
        Option("kl_coeff", 1.0, "Initial weight of the KL term (adapted towards kl_target).", "training",
               NON_NEGATIVE_FLOAT, mutable=True),
        Option("kl_target", 0.01, "KL per update that kl_coeff is adapted towards.", "training", POSITIVE_FLOAT, mutable=True),
        Option("target_network_update_freq", 2, "Move the target policy every this many x circular_buffer_"
               "num_batches x circular_buffer_iterations_per_batch x train_batch_size_per_learner trained env "
               "steps (RLlib's unit).", "training", POSITIVE_INT),
        Option("tau", 1.0, "Polyak factor of target updates (1.0: copy).", "training", float_between(0.0, 1.0), mutable=True),
        Option("target_worker_clipping", 2.0, "Clip of the importance ratio behaviour / target policy in the "
               "surrogate.", "training", POSITIVE_FLOAT, mutable=True),
        Option("use_circular_buffer", True, "Learner input is a circular buffer that serves each batch up to "
               "circular_buffer_iterations_per_batch times (else a FIFO queue of learner_queue_size).",
               "training", BOOL),
        Option("circular_buffer_num_batches", 8, "Batches the circular buffer holds.", "training", POSITIVE_INT),
        Option("circular_buffer_iterations_per_batch", 2, "Most times one batch is trained on.", "training",
               POSITIVE_INT),
        Option("use_gae", True, "RLlib stores it and never reads it: APPO's targets are V-trace's.", "training",
               only_default(True, "APPO's value targets are V-trace's")),
        Option("lambda_", 1.0, "RLlib stores it and never reads it: APPO's targets are V-trace's.", "training",
               only_default(1.0, "APPO's value targets are V-trace's, with no GAE lambda"), key="lambda"),
    )
    # relayrl's defaults learn CartPole-v1 to 450 in 130k-190k env steps (seeds 0-2; 220k-270k with the target
    # policy moved every 16 updates and lr 2e-3); docs/impala.md. The target moves every 4 updates (1 x 4 x 2 x 500
    # trained steps): APPO's clip then keeps each update close to a recent policy without holding it back.
    _DEFAULTS = {"learner_queue_size": 16, "lr": 3e-3, "entropy_coeff": 0.005, "target_network_update_freq": 1,
                 "circular_buffer_num_batches": 4}
    _MODEL_CONFIG_DEFAULTS = {"fcnet_hiddens": [64, 64], "vf_share_layers": False}
    # With use_lstm=True, where the user set nothing: IMPALA's stateful defaults (impala_config.py), which were
    # first measured for APPO on StatelessCartPole over seeds (docs/stateful_modules.md, "APPO").

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.appo.default_appo_rl_module import DefaultAPPOTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultAPPOTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.appo.appo_learner import APPOLearner

        return APPOLearner
