"""Asking for a GPU for the local Learner is never a silent CPU run."""
import pytest
import torch

from relayrl import PPOConfig


def test_a_gpu_asked_for_the_local_learner_is_a_clear_error():
    config = PPOConfig().environment("CartPole-v1").learners(num_gpus_per_learner=1)
    expected = "no CUDA device" if not torch.cuda.is_available() else "num_learners=1"
    with pytest.raises(ValueError, match=rf"num_gpus_per_learner=1 .*{expected}"):
        config.build_algo()
