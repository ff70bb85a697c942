"""SAC learns: Pendulum-v1 (Box) with RLlib's tuned settings and CartPole-v1 (Discrete), fixed seeds and step budgets."""
import pytest
import torch.nn as nn

from relayrl import DefaultModelConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.sac_config import RLLIB_SAC_DEFAULTS
from relayrl.testing.learning import train_until

BUFFER = {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 100000, "alpha": 1.0, "beta": 0.0}


@pytest.mark.slow
def test_pendulum_reaches_minus_250_within_20k_steps():
    # RLlib's examples/algorithms/sac/pendulum_sac.py, one Learner.
    config = (
        SACConfig()
        .update_from_dict(RLLIB_SAC_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("Pendulum-v1")
        .training(initial_alpha=1.001, actor_lr=2e-4, critic_lr=8e-4, alpha_lr=9e-4, lr=None, target_entropy="auto",
                  n_step=(2, 5), tau=0.005, train_batch_size_per_learner=256, target_network_update_freq=1,
                  replay_buffer_config=BUFFER, num_steps_sampled_before_learning_starts=256)
        .rl_module(model_config=DefaultModelConfig(
            fcnet_hiddens=[256, 256], fcnet_activation="relu", fcnet_kernel_initializer=nn.init.xavier_uniform_,
            head_fcnet_hiddens=[], head_fcnet_activation=None, head_fcnet_kernel_initializer="orthogonal_",
            head_fcnet_kernel_initializer_kwargs={"gain": 0.01}))
        .reporting(metrics_num_episodes_for_smoothing=5)
        .debugging(seed=0)
    )
    ret, steps = train_until(config, target=-250.0, budget=20_000)
    assert ret >= -250.0, f"mean return {ret:.1f} after {steps} env steps"


@pytest.mark.slow
def test_discrete_cartpole_reaches_150_within_20k_steps():
    config = (
        SACConfig()
        .update_from_dict(RLLIB_SAC_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("CartPole-v1")
        .training(initial_alpha=1.0, actor_lr=3e-4, critic_lr=1e-3, alpha_lr=3e-4, n_step=(2, 5), tau=0.005,
                  target_network_update_freq=1, replay_buffer_config=BUFFER,
                  num_steps_sampled_before_learning_starts=256)
        .rl_module(model_config={"fcnet_hiddens": [256, 256], "fcnet_activation": "relu"})
        .reporting(metrics_num_episodes_for_smoothing=5)
        .debugging(seed=0)
    )
    ret, steps = train_until(config, target=150.0, budget=20_000)
    assert ret >= 150.0, f"mean return {ret:.1f} after {steps} env steps"
