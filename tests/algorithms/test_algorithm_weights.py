"""RLlib's Algorithm.get_weights / set_weights / export_policy_checkpoint (relayrl/algorithms/algorithm_weights.py):
the weights go into the Learner and the EnvRunners act with them; bad weights are refused and change nothing."""
import os
import sys

import numpy as np
import pytest

from relayrl import DQNConfig, PPOConfig
from relayrl.checkpoints.errors import CheckpointError


def _ppo():
    return (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0).build_algo())


def _runner_weights(algo):
    return {name: value.detach().numpy().copy() for name, value in algo.env_runner.module.state_dict().items()}


def test_set_weights_reaches_the_learner_and_the_runner_and_get_weights_reads_them_back():
    algo = _ppo()
    try:
        weights = algo.get_weights()
        assert list(weights) == ["default_policy"] and algo.get_weights(["default_policy"]).keys() == weights.keys()
        new = {"default_policy": {name: np.full_like(value, 0.5) for name, value in weights["default_policy"].items()}}
        algo.set_weights(new)
        for name, value in algo.get_weights()["default_policy"].items():
            assert np.all(value == 0.5), name
        acting = _runner_weights(algo)
        assert all(np.all(acting[name] == 0.5) for name in acting if name in new["default_policy"])
        algo.train()  # trains on from the set weights
        assert any(not np.all(v == 0.5) for v in algo.get_weights()["default_policy"].values())
    finally:
        algo.stop()


def test_bad_weights_are_refused_naming_the_problem_and_change_nothing():
    algo = _ppo()
    try:
        before = algo.get_weights()["default_policy"]
        first = next(iter(before))
        with pytest.raises(CheckpointError, match="'nope' is not part"):
            algo.set_weights({"nope": {}})
        wrong_shape = {name: np.zeros_like(value) for name, value in before.items()}
        wrong_shape[first] = np.zeros(3, np.float32)
        with pytest.raises(CheckpointError, match=r"set_weights\(\)"):
            algo.set_weights({"default_policy": wrong_shape})
        with pytest.raises(TypeError, match="get_weights"):
            algo.set_weights([1, 2])
        after = algo.get_weights()["default_policy"]
        assert all(np.array_equal(before[name], after[name]) for name in before)
    finally:
        algo.stop()


def test_weights_move_between_two_algorithms_of_the_same_module():
    source = (DQNConfig().environment("CartPole-v1").rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(seed=1).build_algo())
    target = (DQNConfig().environment("CartPole-v1").rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(seed=2).build_algo())
    try:
        target.set_weights(source.get_weights())
        obs = np.zeros(4, np.float32)
        assert source.compute_single_action(obs, explore=False) == target.compute_single_action(obs, explore=False)
        for name, value in source.get_weights()["default_policy"].items():
            assert np.array_equal(value, target.get_weights()["default_policy"][name]), name
    finally:
        source.stop()
        target.stop()


def test_export_policy_checkpoint_is_for_the_policy_api_and_rlmodule_algorithms_are_told_the_fix(tmp_path):
    algo = _ppo()
    try:
        with pytest.raises(ValueError, match=r"get_module\('default_policy'\).save_to_path"):
            algo.export_policy_checkpoint(str(tmp_path / "ppo"))
    finally:
        algo.stop()


def test_the_policy_api_gets_sets_and_exports_its_policies_weights(tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from examples.policy_gradient_custom_policy import MyAlgo
    from relayrl.policy.policy import Policy

    algo = (MyAlgo.get_default_config().environment("CartPole-v1")
            .training(train_batch_size=64, model={"fcnet_hiddens": [8]}).build_algo())
    try:
        weights = algo.get_weights()
        assert list(weights) == ["default_policy"]
        new = {"default_policy": {name: np.full_like(value, 0.25) for name, value in weights["default_policy"].items()}}
        algo.set_weights(new)
        assert all(np.all(v == 0.25) for v in algo.get_policy().get_weights().values())
        with pytest.raises(ValueError, match="no policy"):
            algo.set_weights({"other": {}})
        algo.export_policy_checkpoint(str(tmp_path / "pg"))
        restored = Policy.from_checkpoint(str(tmp_path / "pg"), trusted=["examples.policy_gradient_custom_policy"])
        assert all(np.all(v == 0.25) for v in restored.get_weights().values())
    finally:
        algo.stop()
