"""MultiAgentEpisode: env time vs agent time, turn-based steps, getters, cut, return, state."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl.episodes.multi_agent_episode import SKIP_ENV_TS_TAG, MultiAgentEnvError, MultiAgentEpisode

BOX = gym.spaces.Box(-10.0, 10.0, (1,), np.float32)
OBS_SPACE = gym.spaces.Dict({"p0": BOX, "p1": BOX})
ACT_SPACE = gym.spaces.Dict({"p0": gym.spaces.Discrete(2), "p1": gym.spaces.Discrete(2)})


def o(x):
    return np.array([x], np.float32)


def turn_based(steps=4, mapping=None):
    """p0 acts at even env steps, p1 at odd ones; each gets reward = the env step it acted in."""
    ep = MultiAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE, agent_to_module_mapping_fn=mapping)
    ep.add_env_reset(observations={"p0": o(0)})
    for t in range(steps):
        actor, nxt = f"p{t % 2}", f"p{(t + 1) % 2}"
        ep.add_env_step({nxt: o(t + 1)}, {actor: t % 2}, {actor: float(t)}, {}, terminateds={"__all__": False},
                        extra_model_outputs={actor: {"action_logp": -0.5}})
    return ep


def test_turn_based_env_time_and_agent_time():
    ep = turn_based(4)
    assert len(ep) == ep.env_steps() == 4
    # p0: obs at env t 0, 2, 4 -> its steps 0, 1, 2; p1 joins at env t 1.
    assert ep.env_t_to_agent_t["p0"].data == [0, SKIP_ENV_TS_TAG, 1, SKIP_ENV_TS_TAG, 2]
    assert ep.env_t_to_agent_t["p1"].data == [SKIP_ENV_TS_TAG, 0, SKIP_ENV_TS_TAG, 1, SKIP_ENV_TS_TAG]
    assert len(ep.agent_episodes["p0"]) == 2 and len(ep.agent_episodes["p1"]) == 1
    assert ep.agent_steps() == 3
    assert ep.get_agents_to_act() == {"p0"}
    # p1 acted at env step 3 and has no observation since: its action hangs, its reward too.
    assert ep.get_return() == 0 + 2 + 1 and ep.get_return(include_hanging_rewards=True) == 6


def test_getters_by_env_step_and_by_agent_step():
    ep = turn_based(4)
    assert set(ep.get_observations(-1)) == {"p0"}
    assert ep.get_observations(-1)["p0"] == o(4)
    assert [float(x[0]) for x in ep.get_observations(agent_ids="p0")["p0"]] == [0, 2, 4]
    assert ep.get_actions(env_steps=False)["p0"].tolist() == [0, 0] if ep.is_numpy else \
        ep.get_actions(env_steps=False)["p0"] == [0, 0]
    assert ep.get_rewards(0, fill=0.0) == {"p0": 0.0, "p1": 0.0}
    listed = ep.get_observations(slice(0, 2), return_list=True)
    assert [set(d) for d in listed] == [{"p0"}, {"p1"}]
    assert ep.get_extra_model_outputs("action_logp", env_steps=False)["p0"] == [-0.5, -0.5]


def test_module_for_uses_the_mapping_function_once_per_agent():
    calls = []

    def mapping(agent_id, episode, **kwargs):
        calls.append(agent_id)
        return "left" if agent_id == "p0" else "right"

    ep = turn_based(4, mapping)
    assert ep.module_for("p0") == "left" and ep.module_for("p1") == "right"
    assert ep.agent_episodes["p1"].module_id == "right"
    assert sorted(calls) == ["p0", "p1"]


def test_cut_moves_hanging_action_and_rewards_to_the_successor():
    ep = turn_based(4)
    successor = ep.cut()
    assert successor.id_ == ep.id_ and successor.env_t_started == 4 and len(successor) == 0
    # p1's hanging action (from env step 3) completes in the successor when p1 observes again.
    successor.add_env_step({"p1": o(5)}, {"p0": 0}, {"p0": 4.0, "p1": 0.5}, {}, terminateds={"__all__": False})
    assert len(successor.agent_episodes["p1"]) == 1
    assert successor.agent_episodes["p1"].get_rewards(-1) == pytest.approx(3.5)  # 3 hanging + 0.5


def test_episode_end_completes_every_agent():
    ep = turn_based(3)
    ep.add_env_step({"p0": o(4), "p1": o(4)}, {"p1": 1}, {"p1": 3.0, "p0": 0.0}, {},
                    terminateds={"__all__": True}, extra_model_outputs={"p1": {"action_logp": -0.5}})
    assert ep.is_done and ep.is_terminated
    assert all(e.is_terminated for e in ep.agent_episodes.values())
    assert ep.get_terminateds() == {"p0": True, "p1": True, "__all__": True}
    ep.validate()
    with pytest.raises(MultiAgentEnvError, match="done"):
        ep.add_env_step({"p0": o(5)}, {"p0": 0}, {"p0": 1.0})


def test_data_for_a_finished_agent_is_an_error_naming_it():
    ep = MultiAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE)
    ep.add_env_reset(observations={"p0": o(0), "p1": o(0)})
    ep.add_env_step({"p0": o(1), "p1": o(1)}, {"p0": 0, "p1": 0}, {"p0": 1.0, "p1": 1.0},
                    terminateds={"p0": True, "__all__": False})
    assert ep.get_agents_to_act() == {"p1"}
    with pytest.raises(MultiAgentEnvError, match="'p0'.*after the agent was done"):
        ep.add_env_step({"p1": o(2)}, {"p0": 1, "p1": 0}, {"p1": 1.0}, terminateds={"__all__": False})


def test_observation_for_an_undeclared_agent_names_it():
    ep = MultiAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE)
    with pytest.raises(MultiAgentEnvError, match="'p7'"):
        ep.add_env_reset(observations={"p7": o(0)})


def test_state_round_trip_keeps_hanging_data():
    ep = turn_based(3)
    back = MultiAgentEpisode.from_state(ep.get_state(), observation_space=OBS_SPACE, action_space=ACT_SPACE)
    assert back.id_ == ep.id_ and len(back) == len(ep) and back.get_return(True) == ep.get_return(True)
    assert back.env_t_to_agent_t["p1"].data == ep.env_t_to_agent_t["p1"].data
    for episode in (ep, back):
        episode.add_env_step({"p0": o(4)}, {"p1": 1}, {"p1": 1.0}, terminateds={"__all__": False},
                             extra_model_outputs={"p1": {"action_logp": -0.5}})
    assert back.get_rewards(env_steps=False) == ep.get_rewards(env_steps=False)
    assert back.get_observations(-1) == ep.get_observations(-1) == {"p0": o(4)}


def test_to_numpy_and_prune_empty_agents():
    ep = MultiAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE)
    ep.add_env_reset(observations={"p0": o(0), "p1": o(0)})
    ep.add_env_step({"p0": o(1)}, {"p0": 1}, {"p0": 1.0}, terminateds={"p1": True, "__all__": False})
    ep.prune_empty_agents().to_numpy()
    assert list(ep.agent_episodes) == ["p0"] and ep.is_numpy
    assert isinstance(ep.agent_episodes["p0"].get_observations(), np.ndarray)
