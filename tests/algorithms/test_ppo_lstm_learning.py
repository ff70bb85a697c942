"""PPO with use_lstm=True learns StatelessCartPole (CartPole without the velocities), which needs memory.

The issue's bar is RLlib's: 350 within 300,000 env steps. On the 2-core CI machine the LSTM PPO trains at a
few hundred env steps per second (20 epochs of an LSTM over every 256 steps), so the full bar (about 100k+
steps, 5-10 minutes on the loaded machine) does not fit CI's budget: the test checks a smaller bar, 150
within 50,000 steps (a plain MLP with the same settings stays far below, see benchmarks/lstm_stateless.py,
which runs the full bar). Settings: the benchmark's (rl-zoo's CartPoleNoVel-v1 RecurrentPPO settings).
"""
import pathlib
import sys

import pytest

from relayrl.testing.learning import train_until

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
try:
    from lstm_stateless import lstm_ppo_config  # noqa: E402  (benchmarks/ is a folder of scripts)
finally:
    sys.path.pop(0)


@pytest.mark.slow
def test_lstm_ppo_stateless_cartpole_reaches_150_within_50k_steps():
    ret, steps = train_until(lstm_ppo_config(use_lstm=True, seed=0), target=150.0, budget=50_000)
    assert ret >= 150.0, (ret, steps)
