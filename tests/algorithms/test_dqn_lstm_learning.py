"""DQN with nothing but use_lstm=True (sequence replay, burn-in) learns StatelessCartPole (CartPole without the
velocities, TimeLimit 500), which needs memory: RLlib's bar, a mean return of 350.

The stateful module's defaults do it (DQNConfig._STATEFUL_DEFAULTS; docs/stateful_modules.md, "DQN"): with DQN's
feed-forward defaults the mean return fell to 9.4 and stayed there (seed 0, 50k env steps). Seeds 0-2 on the loaded
2-core machine of 2026-12-04 (benchmarks/recurrent_sweep.py --algo DQN): 350 at 53,424, 67,536 and 187,488 env
steps (seeds 0, 1, 2; 116, 151 and 408 CPU seconds); seeds 3 and 4 at 55,440 and 69,552, seed 5 334 within 200k.
One seed, chosen before measuring (seed 0, the first): DQN's sequence replay costs about 2 ms of CPU per env step
here (an update of 16 sequences of 20 steps every 5 env steps), so this test alone takes about the slow-test budget
(240 s of wall time at a load of 6-8 here; 116 CPU seconds).
"""
import pytest

from relayrl import DefaultModelConfig, DQNConfig
from relayrl.testing.learning import stateless_cartpole, train_until


@pytest.mark.slow
def test_dqn_with_only_use_lstm_reaches_350_within_150k_steps():
    config = (DQNConfig().environment(stateless_cartpole())
              .rl_module(model_config=DefaultModelConfig(use_lstm=True)).debugging(seed=0))
    ret, steps = train_until(config, target=350.0, budget=150_000)
    assert ret >= 350.0, (ret, steps)
