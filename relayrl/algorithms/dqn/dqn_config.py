"""DQNConfig: DQN's options (added to training()) with RLlib's names and defaults."""
from __future__ import annotations

import copy
from typing import Any, Mapping

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.base_options import replay_buffer_names
from relayrl.algorithms.options import (
    BOOL,
    DICT,
    FRACTION,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    Check,
    Option,
    is_int,
    one_of,
    optional,
    schedule_or,
)

__all__ = ["DQNConfig", "DEFAULT_REPLAY_BUFFER_CONFIG", "RLLIB_DQN_REPLAY_BUFFER_CONFIG", "RLLIB_DQN_DEFAULTS"]

# relayrl's default: uniform replay, as SB3's (it learns CartPole, Acrobot and LunarLander as well as prioritized
# replay or better, with less work per update: docs/dqn.md, "Why uniform replay").
DEFAULT_REPLAY_BUFFER_CONFIG = {"type": "EpisodeReplayBuffer", "capacity": 50000}
# RLlib's new-stack default: prioritized replay; also the keys filled in when a config names this type.
RLLIB_DQN_REPLAY_BUFFER_CONFIG = {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50000, "alpha": 0.6,
                                  "beta": 0.4}
# RLlib's DQN defaults where relayrl's differ: `DQNConfig().update_from_dict(RLLIB_DQN_DEFAULTS)` reproduces
# an RLlib DQN config exactly (then your usual builder calls).
RLLIB_DQN_DEFAULTS = {
    "num_envs_per_env_runner": 1,
    "train_batch_size": 32,
    "n_step": 1,
    "training_intensity": None,
    "epsilon": [(0, 1.0), (10000, 0.05)],
    "replay_buffer_config": dict(RLLIB_DQN_REPLAY_BUFFER_CONFIG),
}


def _is_n_step(value: Any) -> bool:
    if is_int(value):
        return value >= 1
    return (isinstance(value, (list, tuple)) and len(value) == 2 and all(is_int(v) for v in value)
            and 1 <= value[0] <= value[1])


_N_STEP = Check("an int >= 1 or a range (low, high) with 1 <= low <= high (each sampled transition "
                "uses a random n in it)", _is_n_step, Any,
                lambda v: v if is_int(v) else tuple(int(x) for x in v))
_TAU = Check("a float in (0, 1]", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1,
             float)

# Features of RLlib's DQN that relayrl does not implement yet: a non-default value is refused.
_UNSUPPORTED = {
    "noisy": (False, "noisy networks"),
    "num_atoms": (1, "distributional Q-learning (C51)"),
    "v_min": (-10.0, "distributional Q-learning (C51)"),
    "v_max": (10.0, "distributional Q-learning (C51)"),
    "sigma0": (0.5, "noisy networks"),
    "categorical_distribution_temperature": (1.0, "Boltzmann exploration over Q-values"),
}


class DQNConfig(AlgorithmConfig):
    """Config for DQN: `DQNConfig().environment("CartPole-v1").training(n_step=3, double_q=True)`."""

    SUPPORTS_MULTI_AGENT = True  # a replay buffer per module (MultiAgentEpisodeReplayBuffer); SAC inherits it

    _OPTIONS = (
        Option("replay_buffer_config", copy.deepcopy(DEFAULT_REPLAY_BUFFER_CONFIG),
               "The replay buffer: {'type': class name | class | dotted path, 'capacity': ..., "
               "more constructor args}. Keys the dict leaves out keep their defaults when the type "
               "is unchanged.", "training", DICT, resolve_names=replay_buffer_names),
        Option("n_step", 1, "Steps of discounted reward summed before bootstrapping; (low, high) draws "
               "n per sampled transition.", "training", _N_STEP),
        Option("double_q", True, "Pick the next action with the online net and rate it with the target "
               "net (double DQN).", "training", BOOL),
        Option("dueling", True, "Split the Q head into value and advantage streams: Q = V + A - mean(A).",
               "training", BOOL),
        Option("target_network_update_freq", 500, "Sampled env steps between target-network updates "
               "(0: after every update).", "training", NON_NEGATIVE_INT),
        Option("tau", 1.0, "Target update weight: target = tau * main + (1 - tau) * target (1.0: "
               "hard copy).", "training", _TAU, mutable=True),
        Option("num_steps_sampled_before_learning_starts", 1000, "Env steps sampled into the buffer "
               "before the first update.", "training", NON_NEGATIVE_INT),
        Option("training_intensity", None, "Trained / sampled env steps ratio (replay ratio); None: one "
               "update per training_step.", "training", optional(POSITIVE_FLOAT)),
        Option("epsilon", [(0, 1.0), (10000, 0.05)], "Epsilon-greedy schedule [(timestep, epsilon), "
               "...] (or a constant) used by the default exploration.", "training",
               schedule_or(FRACTION, FRACTION)),
        Option("td_error_loss_fn", "huber", "Loss on the TD error: 'huber' or 'mse'.", "training",
               one_of("huber", "mse")),
        Option("burn_in_len", 0, "Stateful modules (use_lstm): the first burn_in_len steps of every replayed "
               "sequence only warm up the recurrent state (no gradients, no loss); must be < max_seq_len. A stateful "
               "default module's default: 8 (docs/stateful_modules.md).",
               "training", NON_NEGATIVE_INT),
        Option("store_buffer_in_checkpoints", False, "Save the replay buffer's contents in checkpoints.",
               "training", BOOL),
        *(Option(name, default, f"Not supported yet ({what}); must stay {default!r}.", "training",
                 None, cli=False)
          for name, (default, what) in _UNSUPPORTED.items()),
    )
    # relayrl's DQN defaults learn CartPole-v1 (450 at 72k env steps) and Acrobot-v1 (-100 at 29k) without tuning,
    # with a quarter of an update per env step (docs/dqn.md, "Defaults"); RLLIB_DQN_DEFAULTS restores RLlib's.
    # As RLlib's: one train() reports at least 1000 sampled steps; evaluation is greedy; lr, grad_clip.
    _DEFAULTS = {
        "num_envs_per_env_runner": 8,
        "lr": 5e-4,
        "train_batch_size": 64,
        "grad_clip": 40.0,
        "n_step": 3,
        "training_intensity": 16,
        "epsilon": [(0, 1.0), (10000, 0.02)],
        "min_sample_timesteps_per_iteration": 1000,
        "evaluation_config": {"explore": False},
    }
    # The encoder and head sizes of RLlib's tuned CartPole DQN (a one-layer encoder and 256-unit heads). Kept, as
    # the buffer: a checkpoint stores the user's model_config dict, so earlier checkpoints need the same merge.
    _MODEL_CONFIG_DEFAULTS = {"fcnet_hiddens": [256], "head_fcnet_hiddens": [256]}
    # With a stateful module (use_lstm=True), measured on StatelessCartPole (docs/stateful_modules.md, "DQN"): RLlib's
    # stateless-CartPole example's burn-in and layout (a tanh layer, the LSTM, a head layer) at 64 units, 16
    # sequences per update, one update per 5 sampled env steps (16 x 20 replayed steps / 64), a lower lr (5e-4 and
    # 2.5e-4 climbed, then forgot) and normalised observations.
    _STATEFUL_DEFAULTS = {"train_batch_size": 16, "burn_in_len": 8, "training_intensity": 64, "lr": 1e-4,
                          "observation_filter": "MeanStdFilter"}
    _STATEFUL_MODEL_DEFAULTS = {"lstm_cell_size": 64, "fcnet_hiddens": [64], "fcnet_activation": "tanh",
                                "head_fcnet_hiddens": [64], "lstm_kernel_initializer": "xavier_uniform_"}

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class)

    # -- derived values ---------------------------------------------------------------------
    @property
    def model_config(self) -> dict:
        """The model config plus DQN's auto-included keys (`dueling`, `double_q`, as RLlib's; `burn_in_len`, which
        the default module reads to run the burn-in steps without gradients)."""
        return {**AlgorithmConfig.model_config.fget(self), "dueling": self.dueling, "double_q": self.double_q,
                "burn_in_len": self.burn_in_len}

    @model_config.setter
    def model_config(self, value) -> None:
        self._set_options({"model_config": value})

    def model_config_for(self, observation_space) -> dict:
        """As AlgorithmConfig's (image defaults for images), with the auto-included keys of `model_config` (DQN's
        burn_in_len, ...; SAC's twin_q) that the base leaves out for images."""
        base = super().model_config_for(observation_space)
        return {**{k: v for k, v in self.model_config.items() if k not in base}, **base}

    # The keys filled in for a replay_buffer_config of each built-in type (the first: the default type).
    _REPLAY_BUFFER_DEFAULTS = (DEFAULT_REPLAY_BUFFER_CONFIG, RLLIB_DQN_REPLAY_BUFFER_CONFIG)

    @property
    def effective_replay_buffer_config(self) -> dict:
        """replay_buffer_config with the default's keys filled in when the type is the default's (no type: the
        default type)."""
        user = dict(self.replay_buffer_config)
        user.setdefault("type", self._REPLAY_BUFFER_DEFAULTS[0]["type"])
        for defaults in self._REPLAY_BUFFER_DEFAULTS:
            if user["type"] == defaults["type"]:
                return {**defaults, **user}
        return user

    @property
    def n_step_max(self) -> int:
        return self.n_step[1] if isinstance(self.n_step, tuple) else self.n_step

    def stateful_module_defaults(self) -> tuple:
        """As AlgorithmConfig's, less the burn-in where the user's max_seq_len leaves no step after it to train."""
        options, model_fields = super().stateful_module_defaults()
        max_seq_len = self.model_config.get("max_seq_len", 20)
        if options.get("burn_in_len", 0) >= max_seq_len:
            del options["burn_in_len"]
        return options, model_fields

    def get_rollout_fragment_length(self, worker_index: int = 0) -> int:
        """'auto': n_step (the upper end of a range) steps per env per sample() call, as RLlib's DQN."""
        if self.rollout_fragment_length == "auto":
            return self.n_step_max
        return self.rollout_fragment_length

    def get_default_exploration_config(self) -> dict:
        """Epsilon-greedy over the Q-values, following `epsilon`."""
        return {"type": "EpsilonGreedy", "epsilon_schedule": self.epsilon}

    # -- building ---------------------------------------------------------------------------
    def get_default_rl_module_spec(self):
        from relayrl.algorithms.dqn.default_dqn_rl_module import DefaultDQNTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultDQNTorchRLModule)

    def get_default_learner_class(self):
        from relayrl.algorithms.dqn.dqn_learner import DQNLearner

        return DQNLearner

    def validate(self) -> None:
        super().validate()
        for name, (default, what) in _UNSUPPORTED.items():
            value = getattr(self, name)
            if value != default:
                raise ValueError(f"{name}={value!r} asks for {what}, which relayrl's DQN does not implement yet. "
                                 f"Fix: leave {name} at its default ({default!r}).")
        if self.is_multi_agent and self.model_config.get("use_lstm"):
            name = type(self).__name__.replace("Config", "")
            raise ValueError(f"Multi-agent {name} with use_lstm=True is not supported yet: the multi-agent replay "
                             "buffer samples single transitions, not sequences. Fix: use_lstm=False, or one agent.")
        max_seq_len = self.model_config.get("max_seq_len", 20)
        if self.burn_in_len and 0 < max_seq_len <= self.burn_in_len:  # RLlib's check
            raise ValueError(f"burn_in_len={self.burn_in_len} is larger than or equal to max_seq_len={max_seq_len}: "
                             "no step of a replayed sequence would train. Fix: lower burn_in_len or raise "
                             "model_config max_seq_len.")
        buffer_config = self.replay_buffer_config
        if not isinstance(buffer_config, Mapping) or "capacity" in buffer_config and not (
                is_int(buffer_config["capacity"]) and buffer_config["capacity"] > 0):
            raise ValueError(f"replay_buffer_config['capacity'] must be a positive int, got "
                             f"{buffer_config.get('capacity')!r}.")
        batch = self.total_train_batch_size
        capacity = self.effective_replay_buffer_config.get("capacity")
        if is_int(capacity) and capacity < batch:
            raise ValueError(f"replay_buffer_config['capacity'] ({capacity}) is smaller than the train batch "
                             f"({batch}): raise the capacity or lower train_batch_size_per_learner.")
