"""PPO with use_lstm=True learns StatelessCartPole (CartPole without the velocities), which needs memory.

The issue's bar is RLlib's: 350 within 300,000 env steps. On the loaded 2-core machine the LSTM PPO trains at
a few hundred env steps per second (20 epochs of an LSTM over every 256 steps); seed 0 reaches 350 at 138k
steps in about 500 s (benchmarks/lstm_stateless.py, which runs the full bar), more than CI's budget for new
slow tests. So the test checks a smaller bar: 100 within 40,000 steps (seed 0: 110 at 30.7k steps, ~140 s
on the loaded machine). The same settings with a plain MLP never pass 50.5 in 300,000 steps (the
benchmark). Settings: the benchmark's (rl-zoo's CartPoleNoVel-v1 RecurrentPPO settings).
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
def test_lstm_ppo_stateless_cartpole_reaches_100_within_40k_steps():
    ret, steps = train_until(lstm_ppo_config(use_lstm=True, seed=0), target=100.0, budget=40_000)
    assert ret >= 100.0, (ret, steps)
