"""MultiAgentEnv's contract, make_multi_agent and the one-time checks of a multi-agent env's results."""
import gymnasium as gym
import numpy as np
import pytest

from multi_agent_envs import StrangerEnv, TurnBasedCount
from relayrl.env.env_checks import EnvAPIError
from relayrl.env.env_context import EnvContext
from relayrl.env.multi_agent_env import MultiAgentEnv, MultiAgentEnvError, make_multi_agent
from relayrl.env.multi_agent_vector_env import MultiAgentVectorEnv


def test_make_multi_agent_runs_one_copy_per_agent_until_all_are_done():
    env = make_multi_agent("CartPole-v1")({"num_agents": 2})
    assert env.possible_agents == [0, 1] and env.get_observation_space(1).shape == (4,)
    assert env.get_action_space(0) == gym.spaces.Discrete(2)
    obs, _ = env.reset(seed=3)
    assert set(obs) == {0, 1} and not np.allclose(obs[0], obs[1])  # copy i gets seed + i
    done_agents, steps = set(), 0
    while True:
        obs, rewards, terminateds, truncateds, _ = env.step({a: 0 for a in obs if a not in done_agents})
        steps += 1
        done_agents |= {a for a in obs if terminateds[a] or truncateds[a]}
        if terminateds["__all__"]:
            break
        assert done_agents != {0, 1}
    assert done_agents == {0, 1} and steps < 100  # always pushing left ends CartPole fast


def test_make_multi_agent_takes_a_creator_and_names_the_class():
    cls = make_multi_agent(lambda config: gym.make("Pendulum-v1"))
    env = cls({"num_agents": 3})
    assert env.max_num_agents == 3 and "MultiAgent(" in cls.__name__
    assert env.get_action_space(2).shape == (1,)


def test_space_lookup_names_an_unknown_agent():
    with pytest.raises(MultiAgentEnvError, match="'nobody'.*\\['p0', 'p1'\\]"):
        TurnBasedCount().get_observation_space("nobody")


def test_base_class_asks_for_reset_and_step():
    with pytest.raises(NotImplementedError, match="reset"):
        MultiAgentEnv().reset()


def test_observation_for_an_agent_not_in_the_spaces_names_the_agent():
    vec = MultiAgentVectorEnv(lambda ctx: StrangerEnv(), {}, num_envs=1, worker_index=0, num_workers=0)
    vec.reset()
    with pytest.raises(MultiAgentEnvError, match="'ghost'.*not in its spaces.*\\['a', 'b'\\]"):
        vec.step([{"a": 0, "b": 0}])


def test_step_without_all_key_is_an_api_error():
    class NoAll(TurnBasedCount):
        def step(self, action_dict):
            obs, rewards, terminateds, truncateds, infos = super().step(action_dict)
            del terminateds["__all__"]
            return obs, rewards, terminateds, truncateds, infos

    vec = MultiAgentVectorEnv(lambda ctx: NoAll(), {}, num_envs=1, worker_index=0, num_workers=0)
    vec.reset()
    with pytest.raises(EnvAPIError, match="__all__"):
        vec.step([{"p0": 0}])


def test_vector_env_resets_an_env_whose_episode_ended_in_the_same_call():
    vec = MultiAgentVectorEnv(lambda ctx: TurnBasedCount({"turns": 2}), {}, num_envs=2, worker_index=0,
                              num_workers=0)
    obs, _ = vec.reset(seed=0)
    assert obs[0].keys() == {"p0"}
    *_, resets = vec.step([{"p0": 0}, {"p0": 0}])
    assert resets == [None, None]
    *_, resets = vec.step([{"p1": 1}, {"p1": 1}])
    assert all(r is not None and set(r[0]) == {"p0"} for r in resets)


def test_not_a_multi_agent_env_is_a_clear_error():
    with pytest.raises(TypeError, match="not a MultiAgentEnv.*make_multi_agent"):
        MultiAgentVectorEnv(lambda ctx: gym.make("CartPole-v1"), {}, num_envs=1, worker_index=0, num_workers=0)


def test_make_multi_agent_gives_the_creator_the_env_context_with_worker_index():
    seen = []

    def creator(config):
        seen.append((type(config).__name__, config.worker_index, dict(config)))
        return gym.make("CartPole-v1")

    env_class = make_multi_agent(creator)
    env_class(EnvContext({"num_agents": 2, "size": 3}, worker_index=2, num_workers=4))
    assert seen == [("EnvContext", 2, {"size": 3})] * 2
