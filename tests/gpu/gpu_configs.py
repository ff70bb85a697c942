"""What the GPU tests share: their marks and small configs that train in a few seconds."""
import pytest
import torch

from relayrl import DefaultModelConfig, PPOConfig

NEEDS_CUDA = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]
SMALL = {"fcnet_hiddens": [32, 32]}
LSTM = DefaultModelConfig(use_lstm=True, lstm_cell_size=32, max_seq_len=8, fcnet_hiddens=[32])


def small_ppo(env="CartPole-v1", model=SMALL):
    return (PPOConfig().environment(env).rl_module(model_config=model)
            .env_runners(num_envs_per_env_runner=4, rollout_fragment_length=64)
            .training(train_batch_size=256, minibatch_size=64, num_epochs=2))
