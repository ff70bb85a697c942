"""SACConfig: SAC's options (added to training()) with RLlib's names and defaults; a DQNConfig subclass."""
from __future__ import annotations

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.dqn.dqn_config import DQNConfig
from relayrl.algorithms.options import (
    BOOL,
    NON_NEGATIVE_FLOAT,
    POSITIVE_FLOAT,
    Check,
    Option,
    is_real,
    optional,
    schedule_or,
)

__all__ = ["SACConfig", "DEFAULT_SAC_REPLAY_BUFFER_CONFIG", "RLLIB_SAC_REPLAY_BUFFER_CONFIG", "RLLIB_SAC_DEFAULTS"]

# relayrl's default: uniform replay, as the SAC paper's and SB3's (it learns Pendulum and LunarLanderContinuous as
# well as prioritized replay, with less work per update: docs/sac.md, "Why uniform replay").
DEFAULT_SAC_REPLAY_BUFFER_CONFIG = {"type": "EpisodeReplayBuffer", "capacity": 1_000_000}
# RLlib's default: prioritized replay; also the keys filled in when a config names this type.
RLLIB_SAC_REPLAY_BUFFER_CONFIG = {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1_000_000, "alpha": 0.6,
                                  "beta": 0.4}

# RLlib's SAC defaults where relayrl's differ: `SACConfig().update_from_dict(RLLIB_SAC_DEFAULTS)` reproduces an
# RLlib SAC config exactly (then your usual builder calls).
RLLIB_SAC_DEFAULTS = {
    "actor_lr": 3e-5,
    "critic_lr": 3e-4,
    "alpha_lr": 3e-4,
    "n_step": 1,
    "training_intensity": None,
    "num_steps_sampled_before_learning_starts": 1500,
    "train_batch_size": 256,
    "train_batch_size_per_learner": 256,
    "replay_buffer_config": dict(RLLIB_SAC_REPLAY_BUFFER_CONFIG),
}
_LR = schedule_or(POSITIVE_FLOAT, NON_NEGATIVE_FLOAT)
_TARGET_ENTROPY = Check("'auto', None or a float", lambda v: v is None or v == "auto" or is_real(v))


class SACConfig(DQNConfig):
    """Config for SAC: `SACConfig().environment("Pendulum-v1").training(actor_lr=3e-4, tau=0.005)`."""

    _OPTIONS = (
        Option("twin_q", True, "Learn two Q networks and use the smaller value (clipped double Q).",
               "training", BOOL),
        Option("initial_alpha", 1.0, "Initial entropy temperature alpha (then learned).", "training",
               POSITIVE_FLOAT),
        Option("target_entropy", "auto", "Entropy alpha is tuned towards; 'auto': -dim(A) for Box "
               "actions, 0.98 * log(|A|) for Discrete.", "training", _TARGET_ENTROPY, mutable=True),
        Option("actor_lr", 3e-5, "Policy learning rate (or a schedule [[timestep, value], ...]).",
               "training", _LR, mutable=True),
        Option("critic_lr", 3e-4, "Q-network learning rate (or a schedule).", "training", _LR, mutable=True),
        Option("alpha_lr", 3e-4, "Learning rate of log(alpha) (or a schedule).", "training", _LR, mutable=True),
    )
    # relayrl's SAC defaults learn Pendulum-v1 without tuning (-250 at 6.0k-8.1k env steps, seeds 0-9) with a quarter
    # of a 64-row update per env step (docs/sac.md, "Defaults", with the measurements behind the
    # batch of 64 and the learning rates); RLLIB_SAC_DEFAULTS restores RLlib's. As RLlib's: one env per runner, tau,
    # targets after every update, no gradient clipping, 100 env steps per train() at least.
    _DEFAULTS = {
        "num_envs_per_env_runner": 1,
        "train_batch_size": 64,
        "train_batch_size_per_learner": 64,
        "grad_clip": None,
        "tau": 5e-3,
        "target_network_update_freq": 0,
        "n_step": 3,
        "training_intensity": 16,
        "actor_lr": 1e-3,
        "critic_lr": 3e-3,
        "alpha_lr": 3e-3,
        "replay_buffer_config": dict(DEFAULT_SAC_REPLAY_BUFFER_CONFIG),
        "num_steps_sampled_before_learning_starts": 1000,
        "min_sample_timesteps_per_iteration": 100,
        "epsilon": [(0, 1.0), (10000, 0.05)],  # unused by SAC (it samples its policy); RLlib's value, as DQN's
    }
    # DQN's stateful-module defaults are not SAC's (its default modules have no LSTM yet).
    _STATEFUL_DEFAULTS: dict = {}
    _STATEFUL_MODEL_DEFAULTS: dict = {}
    # As in RLlib, SAC's `lr` is None: actor_lr, critic_lr and alpha_lr set the three optimisers.
    _OPTION_CHANGES = {"lr": {"default": None, "check": optional(_LR)}}
    # SAC's usual networks (RLlib's tuned examples): two 256-unit relu layers, linear heads.
    _MODEL_CONFIG_DEFAULTS = {"fcnet_hiddens": [256, 256], "fcnet_activation": "relu", "head_fcnet_hiddens": []}

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class)

    @property
    def model_config(self) -> dict:
        """The model config plus SAC's auto-included `twin_q` (RLlib's behaviour)."""
        return {**AlgorithmConfig.model_config.fget(self), "twin_q": self.twin_q}

    @model_config.setter
    def model_config(self, value) -> None:
        self._set_options({"model_config": value})

    _REPLAY_BUFFER_DEFAULTS = (DEFAULT_SAC_REPLAY_BUFFER_CONFIG, RLLIB_SAC_REPLAY_BUFFER_CONFIG)

    def get_default_exploration_config(self) -> dict:
        """Sample from the policy when exploring; the deterministic action (tanh of the mean / argmax) otherwise."""
        return {"type": "StochasticSampling"}

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.sac.default_sac_rl_module import DefaultSACTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultSACTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.sac.sac_learner import SACLearner

        return SACLearner

    def validate(self) -> None:
        super().validate()
        if self.lr is not None:
            raise ValueError(f"SAC does not use `lr` (got {self.lr!r}): its three optimisers take actor_lr, "
                             "critic_lr and alpha_lr. Fix: config.training(lr=None, actor_lr=..., critic_lr=..., "
                             "alpha_lr=...).")
        if self.action_space is not None:
            from relayrl.algorithms.sac.default_sac_rl_module import check_sac_action_space

            check_sac_action_space(self.action_space)
