"""Tic-tac-toe (RLlib's turn-based example env): the board from each player's side, the rewards, the ends, and PPO
training both players on it."""
import numpy as np

from relayrl import PPOConfig
from relayrl.examples.envs.classes.multi_agent.tic_tac_toe import TicTacToe


def started_by(player: str) -> TicTacToe:
    env = TicTacToe()
    for seed in range(100):
        observations, _ = env.reset(seed=seed)
        if player in observations:
            return env
    raise AssertionError("no seed lets this player start")


def test_turns_alternate_and_each_player_sees_its_own_marks_as_ones():
    env = started_by("player1")
    observations, rewards, terminateds, truncateds, _ = env.step({"player1": 4})
    assert list(observations) == ["player2"] and rewards == {"player1": 0.0}
    np.testing.assert_array_equal(observations["player2"], [0, 0, 0, 0, -1, 0, 0, 0, 0])
    observations, *_ = env.step({"player2": 0})
    np.testing.assert_array_equal(observations["player1"], [-1, 0, 0, 0, 1, 0, 0, 0, 0])
    assert not terminateds["__all__"] and not truncateds["__all__"]


def test_an_occupied_cell_costs_half_a_point_and_passes_the_turn():
    env = started_by("player1")
    env.step({"player1": 4})
    observations, rewards, *_ = env.step({"player2": 4})
    assert rewards == {"player2": -0.5} and list(observations) == ["player1"]


def test_three_in_a_row_wins_and_both_players_see_the_end():
    env = started_by("player1")
    for move1, move2 in ((0, 3), (1, 4)):
        env.step({"player1": move1})
        env.step({"player2": move2})
    observations, rewards, terminateds, truncateds, _ = env.step({"player1": 2})
    assert rewards == {"player1": 1.0, "player2": -1.0} and terminateds["__all__"] and not truncateds["__all__"]
    np.testing.assert_array_equal(observations["player1"], -observations["player2"])


def test_thirty_moves_truncate_the_episode():
    env = started_by("player1")
    env.step({"player1": 0})
    player = "player2"
    for move in range(28):  # the opponent keeps playing the occupied cell 0
        _, _, _, truncateds, _ = env.step({player: 0})
        assert not truncateds["__all__"]
        player = "player1" if player == "player2" else "player2"
    observations, rewards, terminateds, truncateds, _ = env.step({player: 0})
    assert truncateds["__all__"] and not terminateds["__all__"] and set(observations) == {"player1", "player2"}


def test_ppo_trains_both_players_turn_by_turn():
    config = (PPOConfig().environment(TicTacToe)
              .multi_agent(policies={"player1", "player2"}, policy_mapping_fn=lambda agent_id, *args, **kw: agent_id)
              .training(train_batch_size=512, minibatch_size=128, num_epochs=1)
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        result = algo.train()
        assert set(result["env_runners"]["agent_episode_returns_mean"]) == {"player1", "player2"}
        assert all(np.isfinite(result["learners"][p]["total_loss"]) for p in ("player1", "player2"))
    finally:
        algo.stop()
