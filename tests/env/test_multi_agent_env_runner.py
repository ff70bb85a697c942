"""MultiAgentEnvRunner: one forward pass per module per step, turn-based games, finished agents, errors."""
import numpy as np
import pytest

from multi_agent_envs import EarlyFinisher, StrangerEnv, TurnBasedCount
from relayrl import PPOConfig
from relayrl.algorithms.multi_agent_mapping import UnknownModuleIdError
from relayrl.env.env_runner_group import default_env_runner_class
from relayrl.env.multi_agent_env import MultiAgentEnvError, make_multi_agent
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner
from relayrl.env.sampling.multi_agent_module_actions import MultiAgentModuleActions
from relayrl.env.sampling.multi_agent_numpy_actions import MultiAgentNumpyActions


def config_for(env, policies, mapping, num_envs=2, **env_runner_kwargs):
    return (PPOConfig().environment(env)
            .env_runners(num_envs_per_env_runner=num_envs, rollout_fragment_length=20, **env_runner_kwargs)
            .multi_agent(policies=policies, policy_mapping_fn=mapping)
            .debugging(seed=3))


def by_id(agent_id, episode, **kwargs):
    return f"p{agent_id}"


def test_multi_agent_config_picks_the_multi_agent_runner():
    config = config_for(make_multi_agent("CartPole-v1"), {"p0", "p1"}, by_id)
    assert config.is_multi_agent and default_env_runner_class(config) is MultiAgentEnvRunner
    assert not PPOConfig().is_multi_agent


@pytest.mark.parametrize("numpy_inference", [True, False])
def test_two_policies_sample_every_agent_each_step(numpy_inference):
    config = config_for(make_multi_agent("CartPole-v1"), {"p0", "p1"}, by_id, numpy_inference=numpy_inference)
    config.environment(env_config={"num_agents": 2})
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample()
    source = type(runner._plan_sampling(True, False, 40).actions)
    assert source is (MultiAgentNumpyActions if numpy_inference else MultiAgentModuleActions)
    assert sum(len(e) for e in episodes) == 40  # 20 env steps x 2 envs
    for episode in episodes:
        assert {e.module_id for e in episode.agent_episodes.values()} <= {"p0", "p1"}
        for agent_id, agent_episode in episode.agent_episodes.items():
            assert agent_episode.module_id == f"p{agent_id}"
            assert set(agent_episode.extra_model_outputs) == {"action_logp", "action_dist_inputs"}
    metrics = runner.get_metrics()
    assert set(metrics["num_module_steps_sampled"]) == {"p0", "p1"}


def test_one_forward_pass_per_module_per_step():
    config = config_for(make_multi_agent("CartPole-v1"), {"shared"}, lambda aid, ep, **kw: "shared", num_envs=3,
                        numpy_inference=False)
    config.environment(env_config={"num_agents": 2})
    runner = MultiAgentEnvRunner(config=config)
    calls = []
    module = runner.module["shared"]
    original = module.forward_exploration
    module.forward_exploration = lambda batch, **kw: calls.append(len(batch["obs"])) or original(batch, **kw)
    runner.sample(num_timesteps=12)
    assert len(calls) == 4 and max(calls) <= 6  # 4 steps of 3 envs; one call with every acting agent's row
    assert calls[0] == 6


@pytest.mark.parametrize("numpy_inference", [True, False])
def test_turn_based_game_only_the_player_to_move_acts(numpy_inference):
    envs = []

    def make(ctx):
        envs.append(TurnBasedCount({"turns": 5}))
        return envs[-1]

    config = config_for(make, {"p0", "p1"}, lambda aid, ep, **kw: aid, numpy_inference=numpy_inference)
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_episodes=4)
    assert len(episodes) == 4
    for episode in episodes:  # TurnBasedCount asserts that each step gets exactly the mover's action
        assert len(episode) == 5
        assert len(episode.agent_episodes["p0"]) == 3 and len(episode.agent_episodes["p1"]) == 2
    assert all(len(sent) == 1 for env in envs for sent in env.sent)


def test_a_finished_agents_action_is_never_sent():
    envs = []

    def make(ctx):
        envs.append(EarlyFinisher())
        return envs[-1]

    runner = MultiAgentEnvRunner(config=config_for(make, {"m"}, lambda aid, ep, **kw: "m", num_envs=1))
    episodes = runner.sample(num_episodes=2)
    sent = envs[0].sent
    assert [sorted(d) for d in sent[:5]] == [["a", "b"], ["a", "b"], ["b"], ["b"], ["b"]]
    assert all("a" not in d for i, d in enumerate(sent) if i % 5 >= 2)
    assert len(episodes[0].agent_episodes["a"]) == 2 and len(episodes[0].agent_episodes["b"]) == 5
    assert episodes[0].agent_episodes["a"].is_terminated


def test_mapping_to_an_unknown_module_names_it_and_the_known_ones():
    config = config_for(make_multi_agent("CartPole-v1"), {"p0", "p1"}, lambda aid, ep, **kw: "p9")
    with pytest.raises(UnknownModuleIdError, match="agent 0 to module 'p9'.*\\['p0', 'p1'\\]"):
        MultiAgentEnvRunner(config=config).sample()


def test_observation_for_an_agent_not_in_the_spaces_names_it():
    runner = MultiAgentEnvRunner(config=config_for(lambda ctx: StrangerEnv(), {"m"}, lambda aid, ep, **kw: "m"))
    with pytest.raises(MultiAgentEnvError, match="'ghost'"):
        runner.sample(num_timesteps=4)


def test_count_steps_by_agent_steps():
    config = config_for(make_multi_agent("CartPole-v1"), {"p0", "p1"}, by_id, num_envs=1)
    config.environment(env_config={"num_agents": 2}).multi_agent(count_steps_by="agent_steps")
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_timesteps=10)
    assert sum(e.agent_steps() for e in episodes) in (10, 11)  # 2 agents per step while both are up
    assert sum(len(e) for e in episodes) <= 10


def test_policies_option_is_checked():
    with pytest.raises(ValueError, match="policies must be"):
        PPOConfig().multi_agent(policies="p0")
    config = PPOConfig().multi_agent(policies={"b", "a"})
    assert list(config.policies) == ["a", "b"]
    with pytest.raises(ValueError, match="count_steps_by"):
        PPOConfig().multi_agent(count_steps_by="steps")


def test_algorithms_without_multi_agent_support_say_so_and_unknown_trained_ids_are_named():
    from relayrl import AlgorithmConfig

    class MyAlgoConfig(AlgorithmConfig):  # a user's algorithm that did not declare SUPPORTS_MULTI_AGENT
        pass

    config = MyAlgoConfig().environment(make_multi_agent("CartPole-v1")).multi_agent(policies={"p0"})
    with pytest.raises(ValueError, match="MyAlgo does not train multi-agent configs.*PPO, IMPALA, APPO, DQN, SAC"):
        config.validate()
    config = PPOConfig().environment(make_multi_agent("CartPole-v1")).multi_agent(
        policies={"p0", "p1"}, policies_to_train=["p0", "p2"])
    with pytest.raises(ValueError, match="\\['p2'\\].*\\['p0', 'p1'\\]"):
        config.validate()


def test_random_actions_come_from_each_acting_agents_space():
    envs = []

    def make(ctx):
        envs.append(TurnBasedCount({"turns": 4}))
        return envs[-1]

    runner = MultiAgentEnvRunner(config=config_for(make, {"p0", "p1"}, lambda aid, ep, **kw: aid, num_envs=1))
    episodes = runner.sample(num_episodes=3, random_actions=True)
    assert len(episodes) == 3 and all(len(e) == 4 for e in episodes)
    assert all(len(sent) == 1 and list(sent.values())[0] in (0, 1) for sent in envs[0].sent)


def test_clip_rewards_clips_each_agents_reward_and_reports_the_unclipped_return():
    config = config_for(make_multi_agent("CartPole-v1"), {"p0", "p1"}, by_id)
    config.environment(env_config={"num_agents": 2}, clip_rewards=0.5)
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_episodes=2)
    for episode in episodes:
        assert all(np.all(a.get_rewards() == 0.5) for a in episode.agent_episodes.values())
    # CartPole pays 1.0 per agent step: the reported return is the unclipped sum
    returns = runner.get_metrics()["episode_return_mean"]
    expected = [float(sum(len(a) for a in e.agent_episodes.values())) for e in episodes]
    assert sorted(returns["values"]) == sorted(expected)
