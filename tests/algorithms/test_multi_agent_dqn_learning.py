"""Multi-agent DQN learns: two policies on relayrl's two-agent CartPole, each from its own replay buffer.

Two modules cost about twice a single-agent DQN per env step (~200 env steps/s here, loaded), so the bar is
what fits CI's budget: a summed return of 150 (75 per agent) within 20k env steps (reached at ~14k, ~50 s).
For reference, the same run reached 490 at 35k env steps (~200 s). Multi-agent SAC: test_multi_agent_sac_learning.py.
"""
import pytest

from relayrl import DQNConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.learning import train_until


@pytest.mark.slow  # ~50 s (100 s at load 9 on the 2 shared cores)
def test_dqn_two_policies_reach_150_within_20k_env_steps():
    config = (DQNConfig().environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 2})
              .rl_module(model_config={"fcnet_hiddens": [64], "head_fcnet_hiddens": [64]})
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
              .debugging(seed=0, logger_config={"type": "none"}))
    ret, steps = train_until(config, target=150.0, budget=20_000)
    assert ret >= 150.0, (ret, steps)
