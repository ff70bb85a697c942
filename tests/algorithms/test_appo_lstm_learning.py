"""APPO with use_lstm=True learns StatelessCartPole: RLlib's bar, a mean return of 300 within 2,000,000 env steps.

Settings: benchmarks/appo_lstm_stateless.py (the LSTM PPO benchmark's model, APPO's defaults otherwise, 32 envs
x 32 steps). Seed 0 reached 300 at 276k env steps in 112 s on the loaded 2-core machine (the test: 193 s under heavier load) (APPO's learner
thread makes runs differ a little between runs even with a seed: the budget leaves room).
"""
import pathlib
import sys

import pytest

from relayrl.testing.learning import train_until

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
try:
    from appo_lstm_stateless import appo_config  # noqa: E402  (benchmarks/ is a folder of scripts)
finally:
    sys.path.pop(0)


@pytest.mark.slow
def test_lstm_appo_stateless_cartpole_reaches_300_within_2m_steps():
    ret, steps = train_until(appo_config(seed=0), target=300.0, budget=2_000_000)
    assert ret >= 300.0, (ret, steps)
