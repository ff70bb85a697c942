"""IMPALA's per-EnvRunner train-batch pipelines (algorithms/impala/async_sampling.py) go with their runners: a
stopped algorithm's runner leaves no pipeline behind for a later runner to pick up.

They were keyed by id(runner): a runner made later at a freed runner's address got that runner's pipeline, built
for another config (a test run saw IMPALA on Dict observations train on a pipeline without its
FlattenObservations: a module batch with no `obs`)."""
import gc

from relayrl import IMPALAConfig
from relayrl.algorithms.impala import async_sampling


def _train_once_and_stop():
    config = (IMPALAConfig().environment("CartPole-v1").rl_module(model_config={"fcnet_hiddens": [8]})
              .env_runners(rollout_fragment_length=16).training(train_batch_size=32)
              .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        algo.train()
        assert algo.env_runner in async_sampling._TRAIN_BATCH_PIPELINES
    finally:
        algo.stop()


def test_a_stopped_runners_pipeline_goes_with_it():
    gc.collect()
    before = len(async_sampling._TRAIN_BATCH_PIPELINES)
    for _ in range(3):
        _train_once_and_stop()
    gc.collect()
    assert len(async_sampling._TRAIN_BATCH_PIPELINES) == before
