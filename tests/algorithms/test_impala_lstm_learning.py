"""IMPALA with nothing but use_lstm=True learns StatelessCartPole (CartPole without the velocities, TimeLimit 500),
which needs memory: the issue's bar, a mean return of 350 within 2,000,000 env steps, on each of three seeds.

The stateful module's defaults do it (relayrl/algorithms/resolved_defaults/stateful_module.py, IMPALA's in
impala_config.py); with IMPALA's feed-forward defaults seed 0 took 1.02M env steps (167 CPU seconds). Seeds 0, 1
and 2 were chosen before measuring (2026-12-05, the 2-core machine, benchmarks/recurrent_sweep.py --algo IMPALA):
420k, 297k and 184k env steps, 13-30 CPU seconds each; seeds 0-9 reached 350 at 174k-686k
(docs/stateful_modules.md, "IMPALA"). The embedded IMPALA samples and learns in one thread, so a seeded run
repeats on one kind of CPU (seed 0 gave the same env steps with the settings passed by hand and as defaults); the
budget leaves room for another.
"""
import pytest

from relayrl import DefaultModelConfig, IMPALAConfig
from relayrl.testing.learning import stateless_cartpole, train_until


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_impala_with_only_use_lstm_reaches_350_within_2m_steps(seed):
    config = (IMPALAConfig().environment(stateless_cartpole())
              .rl_module(model_config=DefaultModelConfig(use_lstm=True)).debugging(seed=seed))
    ret, steps = train_until(config, target=350.0, budget=2_000_000)
    assert ret >= 350.0, (seed, ret, steps)
