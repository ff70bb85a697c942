"""SAC: DQN's off-policy training_step (sample -> replay buffer -> updates -> priorities -> weight sync)
with SAC's config, module and Learner (as in RLlib, SAC subclasses DQN)."""
from relayrl.algorithms.dqn.dqn import DQN
from relayrl.algorithms.sac.sac_config import SACConfig


class SAC(DQN):
    @classmethod
    def get_default_config(cls) -> SACConfig:
        return SACConfig()


__all__ = ["SAC"]
