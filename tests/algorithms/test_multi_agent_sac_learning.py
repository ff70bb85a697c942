"""Multi-agent SAC learns: two policies on two-agent Pendulum-v1, each from its own replay buffer
(`MultiAgentEpisodeReplayBuffer`, uniform), relayrl's SAC defaults.

The bar is single-agent SAC's (-250 per agent, summed -500), on the mean of the last 10 episodes as in
test_offpolicy_defaults_learning.py (the default window of 100 Pendulum episodes would be the whole run).
Seed 0 reaches it at 6,426 env steps (~290 s at load 10-14 on the 2 shared cores; with uniform replay, the default
since 2026-11-29, at 6,426 too, in ~17 s on a calm Intel Xeon machine).
"""
import pytest

from relayrl import SACConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.learning import train_until


@pytest.mark.slow
def test_sac_two_policies_reach_summed_minus_500_on_two_agent_pendulum_within_15k_env_steps():
    config = (SACConfig().environment(make_multi_agent("Pendulum-v1"), env_config={"num_agents": 2})
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
              .reporting(metrics_num_episodes_for_smoothing=10)
              .debugging(seed=0, logger_config={"type": "none"}))
    ret, steps = train_until(config, target=-500.0, budget=15_000)
    assert ret >= -500.0, (ret, steps)
