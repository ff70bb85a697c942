"""PPOConfig: PPO's loss options (added to training()) and RLlib's PPO defaults."""
from __future__ import annotations

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import (
    BOOL,
    FRACTION,
    NON_NEGATIVE_FLOAT,
    POSITIVE_FLOAT,
    Option,
    float_at_least,
    schedule_or,
)

__all__ = ["PPOConfig", "RLLIB_PPO_DEFAULTS"]

# RLlib's PPO defaults where relayrl's differ: `PPOConfig().update_from_dict(RLLIB_PPO_DEFAULTS)`
# reproduces an RLlib PPO config exactly (the model via DefaultModelConfig()).
RLLIB_PPO_DEFAULTS = {
    "num_envs_per_env_runner": 1,
    "lr": 5e-5,
    "train_batch_size": 4000,
    "minibatch_size": 128,
    "num_epochs": 30,
    "grad_clip": None,
    "lambda": 1.0,
    "clip_param": 0.3,
    "vf_clip_param": 10.0,
    "vf_loss_coeff": 1.0,
    "use_kl_loss": True,
    "model_config": {"fcnet_hiddens": [256, 256], "vf_share_layers": True},
}


class PPOConfig(AlgorithmConfig):
    """Config for PPO: `PPOConfig().environment("CartPole-v1").training(lambda_=0.95)`."""

    SUPPORTS_MULTI_AGENT = True  # config.multi_agent(...) (docs/multi_agent.md)

    _OPTIONS = (
        Option("lambda_", 1.0, "GAE lambda: 1.0 gives Monte-Carlo advantages, lower values trade "
               "variance for bias.", "training", FRACTION, key="lambda", mutable=True),
        Option("clip_param", 0.3, "Surrogate clip: the probability ratio is clipped to "
               "[1 - clip_param, 1 + clip_param].", "training", POSITIVE_FLOAT, mutable=True),
        Option("vf_clip_param", 10.0, "Clip for the squared value error (inf: no clipping).",
               "training", float_at_least(0, strict=True, allow_inf=True), mutable=True),
        Option("vf_loss_coeff", 1.0, "Weight of the value loss in the total loss.", "training",
               NON_NEGATIVE_FLOAT, mutable=True),
        Option("entropy_coeff", 0.0, "Weight of the entropy bonus, or a schedule [[timestep, "
               "value], ...].", "training", schedule_or(NON_NEGATIVE_FLOAT, NON_NEGATIVE_FLOAT), mutable=True),
        Option("use_kl_loss", True, "Add an adaptive KL penalty between the old and new policy.",
               "training", BOOL),
        Option("kl_coeff", 0.2, "Initial weight of the KL penalty (adapted towards kl_target).",
               "training", NON_NEGATIVE_FLOAT, mutable=True),
        Option("kl_target", 0.01, "KL divergence per update that kl_coeff is adapted towards.",
               "training", POSITIVE_FLOAT, mutable=True),
        Option("use_critic", True, "Learn a value function (GAE and cut episodes need it).",
               "training", BOOL),
        Option("use_gae", True, "Use generalized advantage estimation (needs use_critic).",
               "training", BOOL),
    )
    # relayrl's PPO defaults are the PPO paper's / Stable-Baselines3's, measured better than RLlib's
    # on one machine (docs/ppo.md, "Defaults"): CartPole-v1 reaches 450 in ~65k steps (seeds 0-2)
    # with them. RLLIB_PPO_DEFAULTS below restores RLlib's values for exact ports.
    _DEFAULTS = {
        "num_envs_per_env_runner": 8,
        "lr": 3e-4,
        "train_batch_size": 2048,
        "minibatch_size": 64,
        "num_epochs": 10,
        "shuffle_batch_per_epoch": True,
        "grad_clip": 0.5,
        "lambda_": 0.95,
        "clip_param": 0.2,
        "vf_clip_param": float("inf"),
        "vf_loss_coeff": 0.5,
        "use_kl_loss": False,
    }
    # Merged under the user's model_config dict (a DefaultModelConfig instance is taken as is).
    _MODEL_CONFIG_DEFAULTS = {"fcnet_hiddens": [64, 64], "vf_share_layers": False}
    # With use_lstm=True, where the user set nothing (resolved_defaults/stateful_module.py): 32-step fragments, each
    # with its bootstrap step one sequence of 33, 8 sequences per minibatch, a 1,024-step batch (40 updates per
    # batch), lr 1e-3, observations normalised, and the LSTM on the observation with its own for the critic and a
    # 64-unit layer after it (sb3-contrib's layout). Measured on StatelessCartPole over ten seeds, against PPO's
    # defaults (best 75 in 500k env steps): docs/stateful_modules.md, "Defaults for stateful modules".
    _STATEFUL_DEFAULTS = {"train_batch_size": 1024, "lr": 1e-3, "observation_filter": "MeanStdFilter"}
    _STATEFUL_MODEL_DEFAULTS = {"lstm_cell_size": 64, "fcnet_hiddens": [], "head_fcnet_hiddens": [64],
                                "head_fcnet_activation": "relu", "vf_share_layers": False}
    _STATEFUL_FRAGMENT = 32
    _STATEFUL_SEQUENCES_PER_MINIBATCH = 8

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class)

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultPPOTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.ppo.ppo_learner import PPOLearner

        return PPOLearner

    def validate(self) -> None:
        super().validate()
        self._validate_fragment_vs_batch()
        if self.batch_mode == "truncate_episodes" and not self.use_gae:
            raise ValueError("batch_mode='truncate_episodes' requires use_gae=True: cut episodes "
                             "need the value function to bootstrap their returns. Set "
                             "use_gae=True or batch_mode='complete_episodes'.")
        if self.use_gae and not self.use_critic:
            raise ValueError("use_gae=True requires use_critic=True: GAE needs value estimates. "
                             "Set use_critic=True or use_gae=False.")
