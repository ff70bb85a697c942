"""Multi-agent IMPALA and APPO learn: two policies on relayrl's two-agent CartPole (make_multi_agent), fixed seed.

RLlib's multi-agent bar is PPO's (summed return 900 = 450 x 2 agents within 400k env steps); IMPALA meets it
with relayrl's defaults (900 at ~300k env steps, ~25 s here). APPO gets there at ~400k (~65 s on this loaded
machine), too long for CI's slow-test budget, so its test asks for 500 within 300k (reached at ~200k, ~25 s).
"""
import pytest

from relayrl import APPOConfig, IMPALAConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.learning import train_until


def two_agent_cartpole(config_cls):
    return (config_cls().environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 2})
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
            .debugging(seed=0, logger_config={"type": "none"}))


@pytest.mark.slow  # ~25 s
def test_impala_two_policies_reach_900_within_400k_env_steps():
    ret, steps = train_until(two_agent_cartpole(IMPALAConfig), target=900.0, budget=400_000)
    assert ret >= 900.0, (ret, steps)


@pytest.mark.slow  # ~25 s
def test_appo_two_policies_reach_500_within_300k_env_steps():
    ret, steps = train_until(two_agent_cartpole(APPOConfig), target=500.0, budget=300_000)
    assert ret >= 500.0, (ret, steps)
