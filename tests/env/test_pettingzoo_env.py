"""PettingZoo envs through the wrappers: tictactoe_v3 (AEC, turn-based) and rps_v2 (parallel)."""
import numpy as np
import pytest

pettingzoo = pytest.importorskip("pettingzoo")
from pettingzoo.classic import rps_v2, tictactoe_v3  # noqa: E402

from relayrl import PPOConfig  # noqa: E402
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations  # noqa: E402
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner  # noqa: E402
from relayrl.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv  # noqa: E402


def legal_game(env, seed=0):
    obs, _ = env.reset(seed=seed)
    for _ in range(20):
        agent = next(iter(obs))
        move = int(np.flatnonzero(obs[agent]["action_mask"])[0])
        obs, rewards, terminateds, truncateds, _ = env.step({agent: move})
        if terminateds["__all__"] or truncateds["__all__"]:
            return obs, rewards, terminateds
    raise AssertionError("the game did not end")


def test_tictactoe_is_turn_based_and_ends_with_both_players_final_rewards():
    env = PettingZooEnv(tictactoe_v3.env())
    assert env.possible_agents == ["player_1", "player_2"]
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["player_1"] and set(obs["player_1"]) == {"observation", "action_mask"}
    obs, rewards, _, _, _ = env.step({"player_1": 4})
    assert list(obs) == ["player_2"]
    with pytest.raises(ValueError, match="turn of agent 'player_2'"):
        env.step({"player_1": 0})
    obs, rewards, terminateds = legal_game(env)  # always the first free cell: player_1 wins on the diagonal
    assert set(obs) == {"player_1", "player_2"} and terminateds["__all__"]
    assert rewards == {"player_1": 1.0, "player_2": -1.0}


def test_rps_parallel_steps_every_agent_and_truncates_together():
    env = ParallelPettingZooEnv(rps_v2.parallel_env(max_cycles=3))
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"player_0", "player_1"}
    for step in range(3):
        obs, rewards, terminateds, truncateds, _ = env.step({"player_0": 0, "player_1": 1})  # paper beats rock
        assert rewards == {"player_0": -1.0, "player_1": 1.0}
    assert truncateds["__all__"] and not terminateds["__all__"]


def test_wrong_kind_of_env_is_named():
    with pytest.raises(TypeError, match="ParallelEnv"):
        ParallelPettingZooEnv(object())


def runner_for(creator, policies, mapping):
    config = (PPOConfig().environment(creator)
              .env_runners(num_envs_per_env_runner=2,
                           env_to_module_connector=lambda env, spaces, device: FlattenObservations(multi_agent=True))
              .multi_agent(policies=policies, policy_mapping_fn=mapping)
              .debugging(seed=1))
    return MultiAgentEnvRunner(config=config)


def test_tictactoe_samples_with_a_module_per_player():
    runner = runner_for(lambda ctx: PettingZooEnv(tictactoe_v3.env()), {"player_1", "player_2"},
                        lambda agent_id, episode, **kw: agent_id)
    episodes = runner.sample(num_episodes=4)
    assert len(episodes) == 4
    for episode in episodes:
        p1, p2 = episode.agent_episodes["player_1"], episode.agent_episodes["player_2"]
        assert len(p1) - len(p2) in (0, 1)  # turns alternate, player_1 first
        assert p1.get_observations(0).shape == (27,)  # 3x3x2 board + 9 mask entries, flattened
        assert episode.get_return() == pytest.approx(p1.get_return() + p2.get_return())


def test_rps_samples_with_one_shared_module():
    runner = runner_for(lambda ctx: ParallelPettingZooEnv(rps_v2.parallel_env(max_cycles=5)), {"shared"},
                        lambda agent_id, episode, **kw: "shared")
    episodes = runner.sample(num_episodes=2)
    assert all(len(e) == 5 and e.is_truncated and e.agent_steps() == 10 for e in episodes)
    assert all(e.get_return() == 0 for e in episodes)  # zero-sum
