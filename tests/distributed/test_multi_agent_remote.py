"""Multi-agent PPO with remote EnvRunners (Ray actors): the runners are MultiAgentEnvRunners, return
MultiAgentEpisodes, get every module's weights, and their per-agent metrics reach the results."""
import pytest
import torch

from relayrl import PPOConfig
from relayrl.env.multi_agent_env import make_multi_agent

MultiAgentCartPole = make_multi_agent("CartPole-v1")


def by_id(agent_id, episode, **kwargs):
    return f"p{agent_id}"


@pytest.mark.slow  # Ray and two runner actors: ~75 s on a loaded 2-core machine
def test_remote_multi_agent_runners_train_two_policies():
    config = (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .env_runners(num_env_runners=2, num_envs_per_env_runner=2)
              .training(train_batch_size=256, minibatch_size=64, num_epochs=1)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id)
              .debugging(seed=1, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        result = algo.train()
        runners = result["env_runners"]
        assert set(runners["module_episode_returns_mean"]) == {"p0", "p1"}
        assert result["num_env_steps_sampled_lifetime"] >= 256
        kinds = algo.env_runner_group.foreach_env_runner(lambda runner: type(runner).__name__, local_env_runner=False)
        assert all("MultiAgentEnvRunner" in kind for kind in kinds), kinds
        learner_p1 = algo.learner_group.get_module("p1").state_dict()
        remote = algo.env_runner_group.foreach_env_runner(
            lambda runner: {k: v.clone() for k, v in runner.module["p1"].state_dict().items()},
            local_env_runner=False)
        for state in remote:
            assert all(torch.equal(v, learner_p1[k]) for k, v in state.items())
    finally:
        algo.stop()


@pytest.mark.slow  # Ray and two runner actors: ~50 s on a loaded 2-core machine (plus Ray's start)
def test_remote_multi_agent_impala_trains_each_module_from_the_async_flow():
    from relayrl import IMPALAConfig

    config = (IMPALAConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .env_runners(num_env_runners=2, num_envs_per_env_runner=2, rollout_fragment_length=25)
              .training(train_batch_size=200)
              .reporting(min_sample_timesteps_per_iteration=400)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id)
              .debugging(seed=1, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        learned = set()
        for _ in range(20):  # the learner thread reports what it trained since the last iteration
            result = algo.train()
            learned |= {m for m in ("p0", "p1") if "vf_loss" in result["learners"].get(m, {})}
            if learned == {"p0", "p1"}:
                break
        assert learned == {"p0", "p1"}
        assert set(result["env_runners"]["module_episode_returns_mean"]) == {"p0", "p1"}
    finally:
        algo.stop()
