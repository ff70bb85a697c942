"""PPO with use_lstm=True learns StatelessCartPole (CartPole without the velocities), which needs memory.

The issue's bar, RLlib's: a mean return of 350 within 300,000 env steps, fixed seed. Settings: the benchmark's
(benchmarks/lstm_stateless.py: rl-zoo's CartPoleNoVel-v1 RecurrentPPO settings with 32 envs, 10 epochs and
minibatches of 256); seed 0 reaches 350 at 66,560 env steps on a 2-core Intel AVX-512 machine (2026-11-29), and
seeds 1-15 there at 61k-191k, so the bar has margin on every seed tried. A seeded run is exact only per kind of
CPU (float rounding steers a long LSTM run); the earlier settings (the whole batch as one minibatch) missed the
bar on 3 of seeds 0-9 on that machine, seed 0 among them, while passing on others (docs/stateful_modules.md).
The same settings with a plain MLP stay far below (the benchmark).
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
def test_lstm_ppo_stateless_cartpole_reaches_350_within_300k_steps():
    ret, steps = train_until(lstm_ppo_config(use_lstm=True, seed=0), target=350.0, budget=300_000)
    assert ret >= 350.0, (ret, steps)
