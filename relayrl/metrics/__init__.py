"""Metrics: `MetricsLogger` (owned by every Algorithm, EnvRunner and Learner) and the standard result keys."""
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.metrics.stats import Stats

ENV_RUNNER_RESULTS = "env_runners"
LEARNER_RESULTS = "learners"
EVALUATION_RESULTS = "evaluation"
EPISODE_RETURN_MEAN = "episode_return_mean"
NUM_ENV_STEPS_SAMPLED = "num_env_steps_sampled"
NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"
NUM_ENV_STEPS_TRAINED_LIFETIME = "num_env_steps_trained_lifetime"

__all__ = ["MetricsLogger", "Stats", "ENV_RUNNER_RESULTS", "LEARNER_RESULTS", "EVALUATION_RESULTS",
           "EPISODE_RETURN_MEAN", "NUM_ENV_STEPS_SAMPLED", "NUM_ENV_STEPS_SAMPLED_LIFETIME",
           "NUM_ENV_STEPS_TRAINED_LIFETIME"]
