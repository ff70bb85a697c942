"""IQLConfig: IQL's options (added to training()) with RLlib's names and defaults.

RLlib's IQLConfig subclasses MARWILConfig and adds SAC's twin critics, target networks and per-network learning
rates; relayrl's subclasses SACConfig (as its CQLConfig does), whose networks, optimisers and target updates IQL
reuses, and adds `beta`, `expectile` and `value_lr`. SAC's temperature options (alpha) are unused.
"""
from __future__ import annotations

from relayrl.algorithms.options import POSITIVE_FLOAT, Check, Option, is_real, only_default
from relayrl.algorithms.sac.sac_config import _LR, SACConfig

__all__ = ["IQLConfig"]

_OPEN_FRACTION = Check("a float in the open interval (0, 1) (0.5 is a mean, towards 1 a maximum)",
                       lambda v: is_real(v) and 0.0 < v < 1.0, float)


class IQLConfig(SACConfig):
    """Config for IQL: `IQLConfig().offline_data(input_=[path]).environment("Pendulum-v1")` (the env evaluates)."""

    READS_OFFLINE_DATA = True
    SUPPORTS_MULTI_AGENT = False

    _OPTIONS = (
        Option("beta", 0.1, "Inverse temperature of the policy's advantage weights exp(beta * (Q - V)) (clipped at "
               "100): larger values follow the best logged actions more greedily, towards 0 behaviour cloning.",
               "training", POSITIVE_FLOAT, mutable=True),
        Option("expectile", 0.8, "Expectile of Q(s, a) over the logged actions that V(s) learns: 0.5 the mean, "
               "towards 1 the best logged action's value.", "training", _OPEN_FRACTION, mutable=True),
        Option("value_lr", 3e-4, "Value-network learning rate (or a schedule [[timestep, value], ...]).",
               "training", _LR, mutable=True),
    )
    # RLlib's IQL defaults: one learning rate of 3e-4 per network, twin critics, the targets moved by tau = 1.0 (a
    # copy) after every update; single logged transitions. The IQL paper's and d3rlpy's 256-row batches (RLlib's
    # MARWIL base would give 2000). No minimum of timesteps per train(): one train() runs
    # dataset_num_iters_per_learner updates, as MARWIL's.
    _DEFAULTS = {
        "actor_lr": 3e-4,
        "critic_lr": 3e-4,
        "tau": 1.0,
        "target_network_update_freq": 0,
        "n_step": 1,
        "train_batch_size": 256,
        "train_batch_size_per_learner": None,  # train_batch_size (per Learner), as BC's and MARWIL's
        "num_steps_sampled_before_learning_starts": 0,
        "min_sample_timesteps_per_iteration": 0,
        "min_train_timesteps_per_iteration": 0,
        "training_intensity": None,
    }
    _OPTION_CHANGES = {"n_step": {"check": only_default(1, "IQL learns from single logged transitions")}}

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.iql.default_iql_rl_module import DefaultIQLTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultIQLTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.iql.iql_learner import IQLLearner

        return IQLLearner
