"""IMPALAConfig: V-trace, the learner queue, weight broadcasts and asynchronous sampling options."""
from __future__ import annotations

import logging

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import (
    BOOL,
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    Option,
    only_default,
    optional,
    schedule_or,
)

__all__ = ["IMPALAConfig", "RLLIB_IMPALA_DEFAULTS"]

# RLlib's IMPALA defaults where relayrl's differ: `IMPALAConfig().update_from_dict(RLLIB_IMPALA_DEFAULTS)`.
RLLIB_IMPALA_DEFAULTS = {
    "num_env_runners": 2,
    "num_envs_per_env_runner": 1,
    "num_learners": 1,
    "lr": 5e-4,
    "vf_loss_coeff": 0.5,
    "entropy_coeff": 0.01,
    "min_time_s_per_iteration": 10,
    "min_sample_timesteps_per_iteration": 0,
    "model_config": {"fcnet_hiddens": [256, 256], "vf_share_layers": True},
}


class IMPALAConfig(AlgorithmConfig):
    """Config for IMPALA: `IMPALAConfig().environment("CartPole-v1").env_runners(num_env_runners=2)`."""

    SUPPORTS_MULTI_AGENT = True  # a V-trace loss per module (docs/multi_agent.md); APPO inherits it

    _OPTIONS = (
        Option("vtrace", True, "Use V-trace off-policy corrections (IMPALA needs them: must stay True).",
               "training", BOOL),
        Option("vtrace_clip_rho_threshold", 1.0, "V-trace's rho-bar: importance weights in the value targets are "
               "clipped at this (None: no clipping).", "training", optional(POSITIVE_FLOAT), mutable=True),
        Option("vtrace_clip_pg_rho_threshold", 1.0, "Clip of the importance weights in the policy-gradient "
               "advantages (None: no clipping).", "training", optional(POSITIVE_FLOAT), mutable=True),
        Option("learner_queue_size", 3, "Train batches waiting for the learner thread; a full queue makes the "
               "driver wait (back-pressure) instead of piling batches up.", "training", POSITIVE_INT),
        Option("broadcast_interval", 1, "Send new weights to the EnvRunners after this many learner updates.",
               "training", POSITIVE_INT, mutable=True),
        Option("timeout_s_sampler_manager", 0.0, "Seconds each training_step waits for more remote sample results "
               "once one is ready (0: take those already done; it always waits for a first one).", "training",
               NON_NEGATIVE_FLOAT),
        Option("timeout_s_aggregator_manager", 0.0, "RLlib stores this and never reads it; relayrl has no "
               "aggregator actors.", "training", only_default(0.0, "relayrl has no aggregator actors")),
        Option("vf_loss_coeff", 0.5, "Weight of the value loss.", "training", NON_NEGATIVE_FLOAT, mutable=True),
        Option("entropy_coeff", 0.01, "Weight of the entropy bonus, or a schedule [[timestep, value], ...].",
               "training", schedule_or(NON_NEGATIVE_FLOAT, NON_NEGATIVE_FLOAT), mutable=True),
        Option("num_aggregator_actors_per_learner", 0, "RLlib's aggregator actors, which run the Learner connector "
               "on the sampled episodes: relayrl's EnvRunners build the train-batch columns themselves, so any "
               "value runs without them (a warning says so).", "learners", NON_NEGATIVE_INT),
        Option("num_gpu_loader_threads", 8, "Threads that copy batches to the GPU in RLlib; relayrl's learner "
               "thread moves each batch itself.", "learners",
               only_default(8, "relayrl's learner thread moves batches to the GPU itself")),
    )
    # relayrl's defaults learn CartPole-v1 to 450 in 280k-330k env steps (seeds 0-3; RLlib's tuned example
    # misses it in 2M with 2 runners); docs/impala.md has the table. RLLIB_IMPALA_DEFAULTS restores RLlib's.
    _DEFAULTS = {
        "lr": 4e-3,
        "grad_clip": 40.0,
        "grad_clip_by": "global_norm",
        "rollout_fragment_length": 50,
        "train_batch_size": 500,
        "num_envs_per_env_runner": 10,
        "min_sample_timesteps_per_iteration": 10_000,
        "vf_loss_coeff": 0.05,
        "entropy_coeff": 0.0,
    }
    _MODEL_CONFIG_DEFAULTS = {"fcnet_hiddens": [64, 64], "vf_share_layers": True}
    # With use_lstm=True, where the user set nothing (resolved_defaults/stateful_module.py): APPO's measured
    # stateful defaults (32 envs x 32-step fragments, each with its bootstrap step one sequence of 33, lr 1e-3,
    # gamma 0.98, the value loss at 0.5, no entropy bonus, MeanStdFilter, the LSTM on the observation, its own for
    # the critic, a 64-unit layer after it). On StatelessCartPole, seeds 0-9: 174k-686k env steps to 350 (median
    # 200k; lr 2e-3: median 292k, 748k at most); IMPALA's feed-forward defaults with use_lstm=True took 1.02M on
    # seed 0. docs/stateful_modules.md, "IMPALA". APPOConfig (a subclass) inherits them.
    _STATEFUL_DEFAULTS = {"num_envs_per_env_runner": 32, "lr": 1e-3, "gamma": 0.98, "vf_loss_coeff": 0.5,
                          "entropy_coeff": 0.0, "observation_filter": "MeanStdFilter"}
    _STATEFUL_MODEL_DEFAULTS = {"lstm_cell_size": 64, "fcnet_hiddens": [], "head_fcnet_hiddens": [64],
                                "head_fcnet_activation": "relu", "vf_share_layers": False}
    _STATEFUL_FRAGMENT = 32

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultPPOTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.impala.impala_learner import IMPALALearner

        return IMPALALearner

    def validate(self) -> None:
        super().validate()
        if self.num_aggregator_actors_per_learner:
            _warn_once(f"num_aggregator_actors_per_learner={self.num_aggregator_actors_per_learner} has no effect: "
                       "relayrl runs no aggregator actors; the EnvRunners (the embedded one, or each remote one in "
                       "its actor) turn their episodes into train-batch columns themselves.")
        if not self.vtrace:
            raise ValueError("IMPALA needs vtrace=True: without V-trace its asynchronous samples are not corrected "
                             "for the policy lag. Fix: leave vtrace=True (or use PPO for on-policy training).")
        if self.rollout_fragment_length == "auto":
            raise ValueError("IMPALA needs an int rollout_fragment_length (steps per env per sample, e.g. 50).")
        if self.minibatch_size is not None and self.minibatch_size % self.rollout_fragment_length:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be a multiple of rollout_fragment_length "
                             f"({self.rollout_fragment_length}) (or None: train on each whole batch), so that "
                             "minibatches hold whole fragments for V-trace.")
        if self.batch_mode != "truncate_episodes":
            raise ValueError("IMPALA samples fixed-length fragments: batch_mode must be 'truncate_episodes'.")


_WARNED = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logging.getLogger("relayrl").warning(message)
