"""Multi-agent DQN and SAC: a replay buffer per module (RLlib's MultiAgentEpisodeReplayBuffer semantics), the
Learner updating each trained module, policies_to_train leaving the others untouched, resume."""
import pytest
from multi_agent_checks import assert_resume_is_bit_identical, by_id, same, weights

from relayrl import DQNConfig, SACConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.replay import MultiAgentEpisodeReplayBuffer

MultiAgentCartPole = make_multi_agent("CartPole-v1")
MultiAgentPendulum = make_multi_agent("Pendulum-v1")


def config(config_cls, **multi_agent):
    env = MultiAgentCartPole if config_cls is DQNConfig else MultiAgentPendulum
    return (config_cls().environment(env, env_config={"num_agents": 2})
            .env_runners(num_envs_per_env_runner=2)
            .training(num_steps_sampled_before_learning_starts=100, train_batch_size=32)
            .reporting(min_sample_timesteps_per_iteration=200)
            .rl_module(model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": [16]})
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id, **multi_agent)
            .debugging(seed=2, logger_config={"type": "none"}))



@pytest.mark.parametrize("config_cls, default_buffer", [(DQNConfig, MultiAgentEpisodeReplayBuffer),
                                                        (SACConfig, MultiAgentEpisodeReplayBuffer)])
def test_each_module_trains_from_its_own_replay_buffer(config_cls, default_buffer):
    algo = config(config_cls).build_algo()
    buffer = algo.local_replay_buffer
    assert type(buffer) is default_buffer  # the default type (uniform), one per module
    before = {m: weights(algo, m) for m in ("p0", "p1")}
    result = algo.train()
    assert sorted(buffer.module_ids) == ["p0", "p1"]
    # Each agent's steps are in its module's buffer (agent i maps to module p<i>), all of them.
    sampled = result["env_runners"]["num_agent_steps_sampled_lifetime"]
    assert len(buffer.module_buffer("p0")) == sampled["0"] and len(buffer.module_buffer("p1")) == sampled["1"]
    assert result["replay_buffer"]["num_env_steps_stored"] == len(buffer)
    for module_id in ("p0", "p1"):
        assert "qf_loss" in result["learners"][module_id], result["learners"].keys()
        assert not same(before[module_id], weights(algo, module_id)), module_id
    assert set(result["env_runners"]["num_module_steps_sampled_lifetime"]) == {"p0", "p1"}
    algo.stop()


@pytest.mark.parametrize("config_cls", [DQNConfig, SACConfig])
def test_policies_to_train_leaves_the_other_module_untouched(config_cls):
    algo = config(config_cls, policies_to_train=["p1"]).build_algo()
    before = {m: weights(algo, m) for m in ("p0", "p1")}  # with the target networks
    algo.train()
    result = algo.train()
    assert "p0" not in result["learners"]  # no lr, target-update or step stats for the untrained module
    assert same(before["p0"], weights(algo, "p0"))
    assert not same(before["p1"], weights(algo, "p1"))
    buffer = algo.local_replay_buffer  # only the trained module's transitions are replayed
    assert buffer.module_buffer("p0").get_sampled_timesteps() == 0 < buffer.module_buffer("p1").get_sampled_timesteps()
    algo.stop()


def test_uniform_replay_type_is_kept_per_module():
    algo = config(DQNConfig).training(replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 1000}).build_algo()
    assert type(algo.local_replay_buffer) is MultiAgentEpisodeReplayBuffer
    algo.train()
    assert algo.local_replay_buffer.module_buffer("p0").capacity == 1000
    algo.stop()


def test_dqn_resume_is_bit_identical(tmp_path):
    assert_resume_is_bit_identical(config(DQNConfig), tmp_path, env=MultiAgentCartPole, loss_key="qf_loss")
