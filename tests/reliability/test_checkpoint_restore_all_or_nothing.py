"""A failed restore changes nothing: one CheckpointError naming the file, the part and what differs, and the
algorithm then trains on exactly as it would have without the attempt (weights, optimizer, counters, RNG)."""
import copy
import pathlib
import shutil

import numpy as np
import pytest
import torch
from checkpoint_tampering import edit_json, optimizer_state, same_weights, weights

from relayrl import DQNConfig, PPOConfig
from relayrl.checkpoints import CheckpointError
from relayrl.connectors import MeanStdFilter
from relayrl.testing.compare import assert_same_tree


def make_mean_std_filter(env=None, spaces=None, device=None):
    return MeanStdFilter()


def _ppo(hiddens=(64, 64), **env_runners):
    # SYNC named: the checkpoint holds the sub-envs' state (forged here), and a restore continues bit for bit.
    env_runners.setdefault("gym_env_vectorize_mode", "SYNC")
    return (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2, **env_runners)
            .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": list(hiddens)})
            .debugging(seed=5, logger_config={"type": "none"}))


def _snapshot(algo):
    return {"weights": weights(algo), "optimizer": optimizer_state(algo), "iteration": algo.iteration,
            "counters": dict(algo._counters), "runner": algo.env_runner.get_state(components="rl_module")}


def _assert_same_snapshot(a, b):
    assert same_weights(a["weights"], b["weights"])
    assert_same_tree(a["optimizer"], b["optimizer"], "optimizer")
    assert a["iteration"] == b["iteration"] and a["counters"] == b["counters"]
    assert_same_tree(a["runner"], b["runner"], "runner")


@pytest.fixture
def algo_and_good_checkpoint(tmp_path):
    algo = _ppo().build_algo()
    algo.train()
    good = algo.save(str(tmp_path / "good")).checkpoint.path
    yield algo, good
    algo.stop()


def _expect_failure_changes_nothing(algo, good, attempt, match):
    """Train once from `good` (the reference), then restore `good`, make the failing attempt, train once more:
    both runs must agree bit for bit."""
    algo.restore_from_path(good)
    algo.train()
    reference = _snapshot(algo)
    algo.restore_from_path(good)
    before = _snapshot(algo)
    with pytest.raises(CheckpointError, match=match):
        attempt()
    _assert_same_snapshot(_snapshot(algo), before)
    algo.train()
    _assert_same_snapshot(_snapshot(algo), reference)


def test_ppo_checkpoint_into_dqn_is_refused(algo_and_good_checkpoint, tmp_path):
    ppo, good = algo_and_good_checkpoint
    dqn = (DQNConfig().environment("CartPole-v1").training(num_steps_sampled_before_learning_starts=64)
           .debugging(seed=5, logger_config={"type": "none"}).build_algo())
    try:
        dqn.train()
        before = {"weights": weights(dqn), "iteration": dqn.iteration, "counters": dict(dqn._counters),
                  "buffer": len(dqn.local_replay_buffer)}
        with pytest.raises(CheckpointError, match=r"holds a relayrl.algorithms.ppo.ppo:PPO.*into a DQN"):
            dqn.restore_from_path(good)
        assert same_weights(before["weights"], weights(dqn)) and before["iteration"] == dqn.iteration
        assert before["counters"] == dqn._counters and before["buffer"] == len(dqn.local_replay_buffer)
        # The component folder alone skips the class check; the learner's own check still refuses it.
        with pytest.raises(CheckpointError, match="learner_group"):
            dqn.restore_from_path(pathlib.Path(good) / "learner_group")
        dqn.train()
    finally:
        dqn.stop()


def test_bigger_network_into_smaller_names_file_parameter_and_shapes(algo_and_good_checkpoint, tmp_path):
    algo, good = algo_and_good_checkpoint
    big = _ppo(hiddens=(128, 128)).build_algo()
    big_path = big.save(str(tmp_path / "big")).checkpoint.path
    big.stop()
    match = (r"big/learner_group/state.json, `learner.rl_module.default_policy.encoder.0.weight`: "
             r"shape \(128, 4\) in the checkpoint, \(64, 4\) in DefaultPPOTorchRLModule")
    _expect_failure_changes_nothing(algo, good, lambda: algo.restore_from_path(big_path), match)


@pytest.mark.parametrize("target, value, match", [
    ("attributes", {"learner_group": None}, r"'learner_group' is not part of the state of a PPO"),
    ("attributes", {"_updates_owed": 3.0}, r"'_updates_owed' is not part of the state of a PPO"),
    ("iteration", "abc", r"`iteration`: expected an int >= 0"),
    ("counters", {"num_env_steps_sampled_lifetime": "many"}, r"counters.num_env_steps_sampled_lifetime"),
    ("metrics_logger", {"stats": [{"key": ["x"], "values": "garbage"}]}, r"`metrics_logger`: cannot be restored"),
    ("rng", {"python": [3, [1, 2], None], "numpy": [], "torch": []}, r"`rng`"),
    ("surprise", 1, r"'surprise' is not part of the state of a PPO"),
])
def test_forged_or_malformed_algorithm_state(algo_and_good_checkpoint, tmp_path, target, value, match):
    algo, good = algo_and_good_checkpoint
    bad = pathlib.Path(shutil.copytree(good, tmp_path / "bad"))
    edit_json(bad, "state.json", lambda data: data.__setitem__(target, value))
    _expect_failure_changes_nothing(algo, good, lambda: algo.restore_from_path(bad), match)
    algo.stop()  # stop() works on an algorithm a forged state was refused for


@pytest.mark.parametrize("edit, match", [
    (lambda s: s["sampling"]["attributes"].__setitem__("module", None), r"'module' is not part of"),
    (lambda s: s["sampling"]["env"]["sub_envs"][0][-1]["state"].__setitem__("step", 1), r"no plain-data attribute 'step'"),
    (lambda s: s["sampling"]["env"]["sub_envs"][0][-1]["state"].__setitem__("state", {"__ndarray__": "0.npy"}),
     r"`sampling.env.sub_envs.0.*state.state`: shape"),
    (lambda s: s["sampling"].__setitem__("episode_stats", "x"), r"`sampling`: malformed state"),
])
def test_forged_env_runner_state(algo_and_good_checkpoint, tmp_path, edit, match):
    algo, good = algo_and_good_checkpoint
    bad = pathlib.Path(shutil.copytree(good, tmp_path / "bad"))
    edit_json(bad, "env_runner/state.json", edit)
    _expect_failure_changes_nothing(algo, good, lambda: algo.restore_from_path(bad), match)


def test_wrong_shaped_optimizer_moment_in_a_state(algo_and_good_checkpoint):
    algo, good = algo_and_good_checkpoint
    state = algo.get_state()
    moments = state["learner_group"]["learner"]["optimizer"]["default_policy/default_optimizer"]["state"]
    moments[0]["exp_avg"] = torch.zeros(3, 3)
    _expect_failure_changes_nothing(algo, good, lambda: algo.set_state(state),
                                    r"optimizer.default_policy/default_optimizer.state\[0\].exp_avg`: shape \(3, 3\)")


def test_wrong_shaped_filter_statistics_are_refused_before_sampling(tmp_path):
    algo = _ppo(env_to_module_connector=make_mean_std_filter).build_algo()
    try:
        algo.train()
        good = algo.save(str(tmp_path / "good")).checkpoint.path
        state = copy.deepcopy(algo.get_state())
        stat = state["env_runner"]["env_to_module_connector"]["MeanStdFilter"]["stat"]
        stat["mean"], stat["m2"] = [0.0] * 7, [1.0] * 7
        _expect_failure_changes_nothing(algo, good, lambda: algo.set_state(state),
                                        r"MeanStdFilter.stat.mean`: shape \(7,\) in the checkpoint.*\(4,\)")
    finally:
        algo.stop()


def test_replay_buffer_of_another_capacity_is_refused(tmp_path):
    def dqn(capacity):
        return (DQNConfig().environment("CartPole-v1")
                .training(num_steps_sampled_before_learning_starts=32, replay_buffer_config={"capacity": capacity})
                .debugging(seed=2, logger_config={"type": "none"}).build_algo())

    small, big = dqn(500), dqn(1000)
    try:
        small.train()
        path = small.save(str(tmp_path / "small")).checkpoint.path
        big.train()
        before = (weights(big), len(big.local_replay_buffer), dict(big._counters))
        with pytest.raises(CheckpointError, match=r"replay_buffer/state.json, `storage.capacity`: capacity 500"):
            big.restore_from_path(path)
        assert same_weights(before[0], weights(big)) and before[1:] == (len(big.local_replay_buffer), big._counters)
    finally:
        small.stop()
        big.stop()


def test_a_checkpointed_array_keeps_its_dtype(algo_and_good_checkpoint):
    algo, good = algo_and_good_checkpoint
    state = algo.get_state(components="learner_group")
    rl_module = state["learner_group"]["learner"]["rl_module"]["default_policy"]
    rl_module["pi.0.bias"] = rl_module["pi.0.bias"].astype(np.float64)
    with pytest.raises(CheckpointError, match=r"pi.0.bias`: dtype float64 in the checkpoint, float32"):
        algo.set_state(state)
