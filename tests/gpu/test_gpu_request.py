"""Asking for a GPU for the Learner is never a silent CPU run."""
import pytest
import torch

from relayrl import PPOConfig


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_a_gpu_asked_for_on_a_machine_without_one_is_a_clear_error():
    config = PPOConfig().environment("CartPole-v1").learners(num_gpus_per_learner=1)
    with pytest.raises(ValueError, match=r"num_gpus_per_learner=1 asks for a GPU, but torch sees no CUDA device.*"
                                         r"set num_gpus_per_learner=0"):
        config.build_algo()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_a_gpu_asked_for_the_env_runners_without_one_is_a_clear_error():
    config = PPOConfig().environment("CartPole-v1").env_runners(num_gpus_per_env_runner=1)
    with pytest.raises(ValueError, match=r"num_gpus_per_env_runner=1 asks for a GPU.*set num_gpus_per_env_runner=0"):
        config.build_algo()
