"""DQN with use_lstm=True (sequence replay, burn-in 8) learns StatelessCartPole (CartPole without the velocities),
which needs memory.

Settings: benchmarks/dqn_lstm_stateless.py (RLlib's stateless-CartPole DQN-with-LSTM example's model and
burn-in, relayrl's 8 envs and n_step 3, 4 trained steps per sampled step). Seed 0, on the loaded 2-core
machine: 124 at 24.6k env steps, 212 at 32.8k, 284 at 41k (about 40 s); see docs/dqn.md for a longer run.
The bar here is 150 within 50,000 env steps.
"""
import pathlib
import sys

import pytest

from relayrl.testing.learning import train_until

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
try:
    from dqn_lstm_stateless import lstm_dqn_config  # noqa: E402  (benchmarks/ is a folder of scripts)
finally:
    sys.path.pop(0)


@pytest.mark.slow
def test_lstm_dqn_stateless_cartpole_reaches_150_within_50k_steps():
    ret, steps = train_until(lstm_dqn_config(use_lstm=True, seed=0), target=150.0, budget=50_000)
    assert ret >= 150.0, (ret, steps)
