"""DQN with use_lstm=True (sequence replay, burn-in 8) learns StatelessCartPole (CartPole without the velocities),
which needs memory.

Settings: benchmarks/dqn_lstm_stateless.py (RLlib's stateless-CartPole DQN-with-LSTM example's model and
burn-in, relayrl's 8 envs and n_step 3, 16 sequences per update, one update per 5 sampled env steps). Seed 0,
on the loaded 2-core machine: 144 at 20.5k env steps, 206 at 25.6k (61 s), best 298 at 37.9k (87 s); it does
not reach RLlib's 350 (docs/dqn.md has the longer run). The bar here is 200 within 50,000 env steps (73 s).
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
def test_lstm_dqn_stateless_cartpole_reaches_200_within_50k_steps():
    ret, steps = train_until(lstm_dqn_config(use_lstm=True, seed=0), target=200.0, budget=50_000)
    assert ret >= 200.0, (ret, steps)
