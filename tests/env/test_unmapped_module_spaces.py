"""A policy no agent maps to (RLlib infers its spaces when all agents share one space): it is built with that
space; when the agents' spaces differ, the error names the module and how to give its spaces."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.core.policy_spec import PolicySpec

MultiAgentCartPole = make_multi_agent("CartPole-v1")


def make_multi_agent_mixed(config=None):
    """Agent 0 in CartPole (Box(4,), 2 actions), agent 1 in Pendulum (Box(3,), continuous)."""
    from relayrl.env.multi_agent_env import MultiAgentEnv

    class Mixed(MultiAgentEnv):
        def __init__(self, config=None):
            self.envs = {"0": gym.make("CartPole-v1"), "1": gym.make("Pendulum-v1")}
            self.possible_agents = self.agents = ["0", "1"]
            self.observation_spaces = {a: e.observation_space for a, e in self.envs.items()}
            self.action_spaces = {a: e.action_space for a, e in self.envs.items()}
            super().__init__()

        def reset(self, *, seed=None, options=None):
            return {a: e.reset(seed=seed)[0] for a, e in self.envs.items()}, {}

        def step(self, action_dict):
            out = {a: self.envs[a].step(act) for a, act in action_dict.items()}
            done = any(o[2] or o[3] for o in out.values())
            return ({a: o[0] for a, o in out.items()}, {a: float(o[1]) for a, o in out.items()},
                    {"__all__": done}, {"__all__": False}, {})

    return Mixed(config)


def config(env, policies, mapping):
    return (PPOConfig().environment(env, env_config={"num_agents": 2})
            .env_runners(num_envs_per_env_runner=1)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .multi_agent(policies=policies, policy_mapping_fn=mapping)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_an_unmapped_policy_gets_the_shared_space():
    algo = config(MultiAgentCartPole, {"p0", "spare"}, lambda agent_id, episode, **kw: "p0").build_algo()
    try:
        assert algo.env_runner.module["spare"].observation_space == MultiAgentCartPole().observation_spaces[0]
        assert algo.learner_group.get_module("spare").action_space == gym.spaces.Discrete(2)
        result = algo.train()
        assert set(result["env_runners"]["module_episode_returns_mean"]) == {"p0"}
    finally:
        algo.stop()


def mixed_mapping(agent_id, episode, **kwargs):
    return f"p{agent_id}"


def test_an_unmapped_policy_with_differing_agent_spaces_is_named():
    with pytest.raises(ValueError, match="No agent maps to module 'spare'.*PolicySpec"):
        config(make_multi_agent_mixed, {"p0", "p1", "spare"}, mixed_mapping).build_algo()
    space, actions = gym.spaces.Box(-1.0, 1.0, (4,), np.float32), gym.spaces.Discrete(2)
    policies = {"p0": PolicySpec(), "p1": PolicySpec(), "spare": PolicySpec(observation_space=space,
                                                                            action_space=actions)}
    algo = config(make_multi_agent_mixed, policies, mixed_mapping).build_algo()
    try:
        assert algo.env_runner.module["spare"].observation_space == space
    finally:
        algo.stop()
