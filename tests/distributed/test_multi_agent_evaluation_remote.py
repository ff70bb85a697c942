"""Multi-agent evaluation on a remote evaluation EnvRunner (a Ray actor): RLlib's per-agent and per-module
evaluation keys come back from the actor, the episode count matches evaluation_duration, and the actor
evaluates with the learner's trained weights."""
import pytest
import torch

from relayrl import DQNConfig
from relayrl.env.multi_agent_env import make_multi_agent

MultiAgentCartPole = make_multi_agent("CartPole-v1")


def by_id(agent_id, episode, **kwargs):
    return f"p{agent_id}"


def test_remote_evaluation_runner_reports_per_agent_and_module_metrics():
    config = (DQNConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .env_runners(num_envs_per_env_runner=2, num_cpus_per_env_runner=0.5)
              .training(num_steps_sampled_before_learning_starts=100, train_batch_size=32)
              .reporting(min_sample_timesteps_per_iteration=200)
              .rl_module(model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": [16]})
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id)
              .evaluation(evaluation_interval=1, evaluation_duration=3, evaluation_num_env_runners=1)
              .debugging(seed=1, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        assert algo.eval_env_runner_group.num_remote_env_runners() == 1
        result = algo.train()
        metrics = result["evaluation"]["env_runners"]
        assert metrics["num_episodes"] == 3
        assert set(metrics["agent_episode_returns_mean"]) == {"0", "1"}
        assert set(metrics["module_episode_returns_mean"]) == {"p0", "p1"}
        assert metrics["episode_return_mean"] == pytest.approx(sum(metrics["agent_episode_returns_mean"].values()))
        assert result["num_env_steps_sampled_lifetime"] == result["env_runners"]["num_env_steps_sampled_lifetime"]
        remote = algo.eval_env_runner_group.foreach_env_runner(
            lambda runner: (runner.config.explore, {m: {k: v.clone() for k, v in runner.module[m].state_dict().items()}
                                                    for m in ("p0", "p1")}), local_env_runner=False)
        assert len(remote) == 1
        explore, states = remote[0]
        assert explore is False  # DQN evaluates greedily
        for module_id in ("p0", "p1"):
            learner_state = algo.learner_group.get_module(module_id).state_dict()
            assert all(torch.equal(v, learner_state[k]) for k, v in states[module_id].items()), module_id
    finally:
        algo.stop()
