"""SAC: DQN's off-policy training_step (sample -> replay buffer -> updates -> priorities -> weight sync)
with SAC's config, module and Learner (as in RLlib, SAC subclasses DQN)."""
from relayrl.algorithms.dqn.dqn import DQN
from relayrl.algorithms.sac.sac_config import SACConfig


class SAC(DQN):
    # Options reset_config (Tune's PBT) may change in place, besides the common ones (lr is None for SAC).
    _RESET_CONFIG_MUTABLE_OPTIONS = (*getattr(DQN, "_RESET_CONFIG_MUTABLE_OPTIONS", ()), "actor_lr", "critic_lr",
                                     "alpha_lr", "target_entropy", "tau")

    @classmethod
    def get_default_config(cls) -> SACConfig:
        return SACConfig()


__all__ = ["SAC"]
