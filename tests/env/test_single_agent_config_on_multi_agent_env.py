"""A single-agent config given a MultiAgentEnv class is refused when the algorithm is built, naming
config.multi_agent(...) (before: gymnasium's AttributeError on the env's missing `action_space`)."""
import pytest

from multi_agent_envs import TurnBasedCount
from relayrl import PPOConfig


def _config(mode="SYNC", num_envs=1):
    return (PPOConfig().environment(TurnBasedCount)
            .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
            .training(train_batch_size=12, minibatch_size=6, num_epochs=1))


@pytest.mark.parametrize("mode,num_envs", [("SYNC", 1), ("ASYNC", 2)])
def test_single_agent_config_on_multi_agent_env_is_refused(mode, num_envs):
    with pytest.raises(ValueError, match=r"TurnBasedCount is a MultiAgentEnv.*config\.multi_agent\(policies="):
        _config(mode, num_envs).build()


def test_the_named_fix_builds_and_trains():
    config = _config().multi_agent(policies={"main"}, policy_mapping_fn=lambda agent_id, episode, **kw: "main")
    algo = config.build()
    try:
        assert algo.train()["num_env_steps_sampled_lifetime"] > 0
    finally:
        algo.stop()
