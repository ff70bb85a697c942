"""RLlib 2.60's observation-preprocessor base classes: preprocess() rewrites each episode's newest observation, in
the episode, with the output space the subclass declares."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.connectors.env_to_module.observation_preprocessor import (
    MultiAgentObservationPreprocessor,
    ObservationPreprocessor,
    SingleAgentObservationPreprocessor,
)
from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole


class AppendOne(SingleAgentObservationPreprocessor):
    """CartPole's 4 numbers and a constant 1."""

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        space = input_observation_space
        low, high = np.append(space.low, 1.0).astype(np.float32), np.append(space.high, 1.0).astype(np.float32)
        return gym.spaces.Box(low, high, dtype=np.float32)

    def preprocess(self, observation, episode):
        return np.append(observation, 1.0).astype(np.float32)


class AgentIndex(MultiAgentObservationPreprocessor):
    """Each agent's observation gets its agent id appended (the multi-agent space is a Dict by agent id)."""

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        return gym.spaces.Dict({aid: gym.spaces.Box(-np.inf, np.inf, (space.shape[0] + 1,), np.float32)
                                for aid, space in input_observation_space.spaces.items()})

    def preprocess(self, observations, episode):
        return {aid: np.append(obs, float(aid)).astype(np.float32) for aid, obs in observations.items()}


def _train_and_sample(config):
    algo = config.training(train_batch_size=128, minibatch_size=64, num_epochs=1).debugging(seed=0).build_algo()
    try:
        result = algo.train()
        return result, algo.env_runner.sample(), algo
    finally:
        algo.stop()


def test_a_single_agent_preprocessor_feeds_the_module_and_the_episodes():
    result, episodes, algo = _train_and_sample(
        PPOConfig().environment("CartPole-v1")
        .env_runners(env_to_module_connector=lambda env, spaces, device: AppendOne()))
    assert algo.get_module().observation_space.shape == (5,)
    observations = np.concatenate([np.asarray(ep.get_observations()) for ep in episodes])
    assert observations.shape[1] == 5 and np.all(observations[:, 4] == 1.0)
    assert np.isfinite(result["learners"]["default_policy"]["total_loss"])


def test_a_multi_agent_preprocessor_rewrites_each_agents_observation():
    _, episodes, algo = _train_and_sample(
        PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .env_runners(env_to_module_connector=lambda env, spaces, device: AgentIndex())
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *args, **kwargs: f"p{aid}"))
    assert algo.get_module("p1").observation_space.shape == (5,)
    for episode in episodes:
        for agent_id, agent_episode in episode.agent_episodes.items():
            observations = np.asarray(agent_episode.get_observations())
            assert observations.shape[1] == 5 and np.all(observations[:, 4] == float(agent_id))


def test_preprocess_is_required_and_the_old_name_is_the_single_agent_class():
    assert ObservationPreprocessor is SingleAgentObservationPreprocessor
    with pytest.raises(TypeError, match="preprocess"):
        SingleAgentObservationPreprocessor()
