"""The last evaluation's results go into checkpoints (their plain data), so a resumed run reports them in the
iterations before it evaluates again, as the uninterrupted run does (and RLlib 2.60, through its metrics logger)."""
import math

import numpy as np
import pytest

from relayrl import Algorithm, PPOConfig
from relayrl.algorithms.carried_evaluation import plain_results
from relayrl.checkpoints import CheckpointError


def test_only_plain_data_is_kept():
    video = np.zeros((2, 3, 8, 8), np.uint8)
    results = {"env_runners": {"episode_return_mean": np.float32(21.5), "num_episodes": np.int64(2),
                               "returns": [1.0, np.float64(2.0)], "nan": float("nan")},
               "episode_videos": [video], "custom": object(), "flag": np.bool_(True), 7: "not a text key",
               "text": "ok", "none": None}
    plain = plain_results(results)
    assert plain["env_runners"]["episode_return_mean"] == 21.5 and type(plain["env_runners"]["num_episodes"]) is int
    assert plain["env_runners"]["returns"] == [1.0, 2.0] and math.isnan(plain["env_runners"]["nan"])
    assert plain["flag"] is True and (plain["text"], plain["none"]) == ("ok", None)
    assert "episode_videos" not in plain and "custom" not in plain and 7 not in plain
    assert results["episode_videos"][0] is video  # the live results are not touched
    assert plain_results(None) is None


def _algo():
    return (PPOConfig().environment("CartPole-v1")
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .evaluation(evaluation_interval=2, evaluation_duration=1)
            .debugging(seed=3, logger_config={"type": "none"})).build_algo()


def test_a_resumed_run_carries_the_last_evaluation_until_it_evaluates_again(tmp_path):
    algo = _algo()
    try:
        evaluated = [algo.train() for _ in range(2)][-1]["evaluation"]
        algo._last_evaluation_results["custom"] = object()  # e.g. what a custom evaluation function returned
        path = algo.save_to_path(tmp_path / "checkpoint")
        uninterrupted = algo.train()["evaluation"]
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(path)
    try:
        third, fourth = restored.train(), restored.train()
        assert third["evaluation"] == evaluated == {k: v for k, v in uninterrupted.items() if k != "custom"}
        assert fourth["evaluation"]["env_runners"]["num_episodes"] >= 1 and restored.iteration == 4
    finally:
        restored.stop()


@pytest.mark.parametrize("stored,problem", [
    (5, r"`last_evaluation_results`: expected a dict of results or None, found int"),
    ({"env_runners": {"episode_return_mean": (1, 2)}},
     r"`last_evaluation_results.env_runners.episode_return_mean`: expected a number, text, a list or a dict, "
     r"found tuple")])
def test_stored_results_that_are_not_plain_data_are_refused_and_nothing_changes(tmp_path, stored, problem):
    algo = _algo()
    try:
        algo.train()
        state = algo.get_state()
        assert state["last_evaluation_results"] is None  # (no evaluation yet)
        algo.train()
        algo._last_evaluation_results = carried = {"env_runners": {"episode_return_mean": 9.0}}
        with pytest.raises(CheckpointError, match=problem):
            algo.set_state({**state, "last_evaluation_results": stored})
        assert algo.iteration == 2 and algo._last_evaluation_results is carried
    finally:
        algo.stop()
