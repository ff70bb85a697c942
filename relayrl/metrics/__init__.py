"""Metrics: `MetricsLogger` (owned by every Algorithm, EnvRunner and Learner) and the standard result keys."""
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.metrics.stats import Stats

from relayrl.metrics.keys import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    EVALUATION_RESULTS,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
)

__all__ = ["MetricsLogger", "Stats", "ENV_RUNNER_RESULTS", "LEARNER_RESULTS", "EVALUATION_RESULTS",
           "EPISODE_RETURN_MEAN", "NUM_ENV_STEPS_SAMPLED", "NUM_ENV_STEPS_SAMPLED_LIFETIME",
           "NUM_ENV_STEPS_TRAINED_LIFETIME"]
