"""DQN and SAC learn with relayrl's defaults (nothing tuned but the env and the seed), fixed seeds and step budgets.

The bars are issue 27's: SAC Pendulum-v1 -250 within 20,000 env steps, DQN CartPole-v1 450 within 100,000.
"""
import pytest

from relayrl.algorithms.dqn import DQNConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.testing.learning import train_until


@pytest.mark.slow
def test_sac_with_defaults_reaches_minus_250_on_pendulum_within_20k_steps():
    # The mean of the last 10 episodes (2,000 steps): the default window of 100 Pendulum episodes is the whole
    # 20k-step run, random first episodes included.
    config = (SACConfig().environment("Pendulum-v1").reporting(metrics_num_episodes_for_smoothing=10)
              .debugging(seed=0, logger_config={"type": "none"}))
    ret, steps = train_until(config, target=-250.0, budget=20_000)
    assert ret >= -250.0, f"mean return {ret:.1f} after {steps} env steps"


@pytest.mark.slow
def test_dqn_with_defaults_reaches_450_on_cartpole_within_100k_steps():
    config = DQNConfig().environment("CartPole-v1").debugging(seed=0, logger_config={"type": "none"})
    ret, steps = train_until(config, target=450.0, budget=100_000)
    assert ret >= 450.0, f"mean return {ret:.1f} after {steps} env steps"
    assert steps <= 100_000 + 2_000
