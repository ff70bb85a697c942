"""CQLConfig: CQL's options (added to training()) with RLlib's names and defaults; a SACConfig subclass."""
from __future__ import annotations

from relayrl.algorithms.options import BOOL, NON_NEGATIVE_FLOAT, NON_NEGATIVE_INT, POSITIVE_FLOAT, POSITIVE_INT, Option
from relayrl.algorithms.sac.sac_config import SACConfig

__all__ = ["CQLConfig"]


class CQLConfig(SACConfig):
    """Config for CQL: `CQLConfig().offline_data(input_=[path]).environment("Pendulum-v1")` (the env evaluates)."""

    READS_OFFLINE_DATA = True
    SUPPORTS_MULTI_AGENT = False

    _OPTIONS = (
        Option("bc_iters", 20000, "Updates whose actor loss is behaviour cloning of the logged actions (then SAC's "
               "actor loss).", "training", NON_NEGATIVE_INT),
        Option("temperature", 1.0, "Temperature of the conservative term's log-sum-exp over Q values.", "training",
               POSITIVE_FLOAT, mutable=True),
        Option("num_actions", 10, "Actions sampled per state (uniform, and from the policy at s and s') for the "
               "conservative term.", "training", POSITIVE_INT),
        Option("lagrangian", False, "Tune the conservative term's weight (alpha prime) to keep it at "
               "lagrangian_thresh.", "training", BOOL),
        Option("lagrangian_thresh", 5.0, "The gap the Lagrangian keeps the conservative term at.", "training",
               NON_NEGATIVE_FLOAT, mutable=True),
        Option("min_q_weight", 5.0, "Weight of the conservative term (with lagrangian: its scale before alpha "
               "prime).", "training", NON_NEGATIVE_FLOAT, mutable=True),
        Option("deterministic_backup", True, "Bellman targets without SAC's entropy term.", "training", BOOL,
               mutable=True),
    )
    # RLlib's CQL defaults (lr: SAC's three optimisers' rates; one-step targets from single transitions), with
    # d3rlpy's and RLlib's tuned examples' 256-row batches and RLlib's 100 trained steps per train() at least.
    _DEFAULTS = {
        "actor_lr": 1e-4,
        "critic_lr": 1e-3,
        "alpha_lr": 1e-3,
        "n_step": 1,
        "train_batch_size": 256,
        # None: train_batch_size (per Learner), as BC's, MARWIL's and IQL's; RLlib's 256 here left
        # `.training(train_batch_size=...)` without effect.
        "train_batch_size_per_learner": None,
        "td_error_loss_fn": "mse",
        "num_steps_sampled_before_learning_starts": 0,
        "min_sample_timesteps_per_iteration": 0,
        "min_train_timesteps_per_iteration": 100,
        "training_intensity": None,
    }

    @property
    def model_config(self) -> dict:
        """SAC's model config plus CQL's auto-included `num_actions` (RLlib's behaviour)."""
        return {**SACConfig.model_config.fget(self), "num_actions": self.num_actions}

    @model_config.setter
    def model_config(self, value) -> None:
        self._set_options({"model_config": value})

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.cql.default_cql_rl_module import DefaultCQLTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultCQLTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.cql.cql_learner import CQLLearner

        return CQLLearner

    def validate(self) -> None:
        super().validate()
        if self.n_step != 1:
            raise ValueError(f"CQL learns from single logged transitions: n_step must be 1 (got {self.n_step!r}).")
