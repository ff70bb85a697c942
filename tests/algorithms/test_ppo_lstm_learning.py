"""PPO with nothing but use_lstm=True learns StatelessCartPole (CartPole without the velocities, TimeLimit 500),
which needs memory: RLlib's bar, a mean return of 350 within 300,000 env steps, on each of three seeds.

The stateful module's defaults do it (relayrl/algorithms/resolved_defaults/stateful_module.py, PPO's in
ppo_config.py); with PPO's feed-forward defaults the best mean return was 75 in 500k env steps. Ten seeds, on the
2-core machine of 2026-12-04 (benchmarks/recurrent_sweep.py --algo PPO --seeds 0-9): every one reached 350, at
86k-191k env steps (docs/stateful_modules.md, "Defaults for a stateful module"). The three seeds here are the
cheapest of those (about 40 CPU seconds each there); a seeded run is exact only per kind of CPU, and the budget
leaves room.
"""
import pytest

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.testing.learning import stateless_cartpole, train_until


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 4, 7])
def test_ppo_with_only_use_lstm_reaches_350_within_300k_steps(seed):
    config = (PPOConfig().environment(stateless_cartpole()).rl_module(model_config=DefaultModelConfig(use_lstm=True))
              .debugging(seed=seed))
    ret, steps = train_until(config, target=350.0, budget=300_000)
    assert ret >= 350.0, (seed, ret, steps)
