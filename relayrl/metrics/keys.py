"""The result keys relayrl reports, under RLlib's constant names (RLlib's `ray.rllib.utils.metrics`).

`result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]` is `result["env_runners"]["episode_return_mean"]`. Only keys
relayrl's results hold are here; `relayrl.utils.metrics` (RLlib's path) re-exports them.
"""
# Top-level groups of a train() result.
ENV_RUNNER_RESULTS = "env_runners"
LEARNER_RESULTS = "learners"
EVALUATION_RESULTS = "evaluation"
FAULT_TOLERANCE_STATS = "fault_tolerance"
TIMERS = "timers"

# Counters (top level and under env_runners / learners).
NUM_ENV_STEPS_SAMPLED = "num_env_steps_sampled"
NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"
NUM_ENV_STEPS_TRAINED = "num_env_steps_trained"
NUM_ENV_STEPS_TRAINED_LIFETIME = "num_env_steps_trained_lifetime"
NUM_MODULE_STEPS_TRAINED = "num_module_steps_trained"
NUM_EPISODES = "num_episodes"
NUM_EPISODES_LIFETIME = "num_episodes_lifetime"
NUM_TRAINING_STEP_CALLS_PER_ITERATION = "num_training_step_calls_per_iteration"

# The old API stack's counters and timers (Policy-based algorithms' training_step, relayrl/policy/).
NUM_AGENT_STEPS_SAMPLED = "num_agent_steps_sampled"
NUM_AGENT_STEPS_TRAINED = "num_agent_steps_trained"
WORKER_UPDATE_TIMER = "update"
LEARN_ON_BATCH_TIMER = "learn"

# Episode statistics (under env_runners, and evaluation/env_runners).
EPISODE_RETURN_MEAN = "episode_return_mean"
EPISODE_RETURN_MIN = "episode_return_min"
EPISODE_RETURN_MAX = "episode_return_max"
EPISODE_LEN_MEAN = "episode_len_mean"
EPISODE_LEN_MIN = "episode_len_min"
EPISODE_LEN_MAX = "episode_len_max"
EPISODE_DURATION_SEC_MEAN = "episode_duration_sec_mean"

# Timers (under timers).
TRAINING_ITERATION_TIMER = "training_iteration"
TRAINING_STEP_TIMER = "training_step"
ENV_RUNNER_SAMPLING_TIMER = "env_runner_sampling_timer"
LEARNER_UPDATE_TIMER = "learner_update_timer"
SYNCH_WORKER_WEIGHTS_TIMER = "synch_weights"
EVALUATION_ITERATION_TIMER = "evaluation_iteration"

__all__ = [name for name in dir() if name.isupper()]
