"""Remote Learners on a GPU: `num_learners >= 1` with `num_gpus_per_learner > 0` puts each Learner actor on the
GPU Ray assigned it. One actor with a whole GPU trains alone; two actors with half a GPU each share it and
all-reduce over gloo (NCCL refuses two ranks on one device). Marked `gpu` (skipped without CUDA); needs Ray.
"""
import numpy as np
import pytest
import torch
from gpu_configs import NEEDS_CUDA, small_ppo

from relayrl import IMPALAConfig
from relayrl.testing.compare import assert_learners_in_sync

ray = pytest.importorskip("ray")
pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module")
def ray_with_a_gpu():
    ray.init(address="local", num_cpus=4, num_gpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _devices(algo):
    """The device of every tensor in each remote Learner's module, as a set of strings per Learner."""
    return algo.learner_group.foreach_learner(
        lambda learner: sorted({str(t.device) for t in learner.module.state_dict().values()}))


def _weights(algo):
    return {k: np.array(v, copy=True) for k, v in algo.learner_group.get_weights()["default_policy"].items()}


@pytest.mark.parametrize("learners, gpus", [(1, 1), (2, 0.5)])
def test_remote_ppo_learners_train_on_the_gpu(ray_with_a_gpu, learners, gpus):
    config = (small_ppo().learners(num_learners=learners, num_gpus_per_learner=gpus, num_cpus_per_learner=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        before = _weights(algo)
        for _ in range(3):
            result = algo.train()
        assert _devices(algo) == [["cuda:0"]] * learners
        after = _weights(algo)
        assert any(not np.array_equal(after[k], before[k]) for k in before), "the weights did not change"
        assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
        assert_learners_in_sync(algo.learner_group)
    finally:
        algo.stop()


def test_a_remote_impala_learner_trains_on_the_gpu(ray_with_a_gpu):
    config = (IMPALAConfig().environment("CartPole-v1").rl_module(model_config={"fcnet_hiddens": [32, 32]})
              .env_runners(num_env_runners=1).learners(num_learners=1, num_gpus_per_learner=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        for _ in range(3):
            algo.train()
        assert _devices(algo) == [["cuda:0"]]
        assert torch.cuda.is_available()
    finally:
        algo.stop()
