"""BC, MARWIL and CQL train from offline files: a few updates each on a small dataset (finite losses, weights move,
timesteps counted), evaluation in an env, checkpoints, the CLI (also IQL's; its other tests: test_iql.py), and the
errors of configs that cannot work."""
import json
import pathlib

import gymnasium as gym
import numpy as np
import pytest

from relayrl import BC, BCConfig, CQLConfig, MARWILConfig, PPOConfig
from relayrl.cli import main


def _config(config_class, data, env="CartPole-v1", batch=32, **training):
    return (config_class().environment(env).offline_data(input_=data).training(train_batch_size=batch, **training)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))


def _weights(algo):
    return {k: v.copy() for k, v in algo.learner_group.get_weights()["default_policy"].items()}


def _changed(before, after) -> bool:
    return any(not np.array_equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("config_class, data, env, losses", [
    (BCConfig, "cartpole_rows", "CartPole-v1", ("policy_loss",)),
    (MARWILConfig, "cartpole_rows", "CartPole-v1", ("policy_loss", "vf_loss", "moving_avg_sqd_adv_norm")),
    (BCConfig, "cartpole_episodes", "CartPole-v1", ("policy_loss",)),
    (MARWILConfig, "cartpole_episodes", "CartPole-v1", ("policy_loss", "vf_loss")),
    (CQLConfig, "pendulum_rows", "Pendulum-v1", ("qf_loss", "qf_twin_loss", "cql_loss", "actor_loss")),
])
def test_a_few_updates(config_class, data, env, losses, request):
    config = _config(config_class, request.getfixturevalue(data), env)
    config.offline_data(input_read_episodes=data.endswith("episodes"))
    if config_class is CQLConfig:
        config.training(bc_iters=1)
    config.evaluation(evaluation_interval=2, evaluation_duration=1)
    algo = config.build_algo()
    try:
        before = _weights(algo)
        first, second = algo.train(), algo.train()
        assert _changed(before, _weights(algo))
    finally:
        algo.stop()
    for result, iteration in ((first, 1), (second, 2)):
        stats = result["learners"]["default_policy"]
        assert all(np.isfinite(stats[name]) for name in losses), stats
        assert result["num_env_steps_trained_lifetime"] == result["num_env_steps_sampled_lifetime"]
        assert result["num_env_steps_trained_lifetime"] >= 32 * iteration  # (CQL: 100 steps per train() at least)
    assert "evaluation" not in first and second["evaluation"]["env_runners"]["num_episodes"] == 1


def test_spaces_instead_of_an_env(cartpole_rows):
    env = gym.make("CartPole-v1")
    config = (BCConfig().environment(observation_space=env.observation_space, action_space=env.action_space)
              .offline_data(input_=cartpole_rows).training(train_batch_size=16)
              .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        assert algo.env_runner is None and algo.train()["num_env_steps_trained_lifetime"] == 16
    finally:
        algo.stop()


def test_paths_may_be_pathlib_paths(cartpole_rows, tmp_path):
    """input_ and output take pathlib.Path (users' scripts build paths so); the config keeps them as str."""
    env = gym.make("CartPole-v1")
    config = (BCConfig().environment(observation_space=env.observation_space, action_space=env.action_space)
              .offline_data(input_=[pathlib.Path(cartpole_rows)], output=tmp_path / "out")
              .training(train_batch_size=16).rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(seed=0, logger_config={"type": "none"}))
    assert config.input_ == [str(cartpole_rows)] and config.output == str(tmp_path / "out")
    algo = config.build_algo()
    try:
        assert algo.train()["num_env_steps_trained_lifetime"] == 16
    finally:
        algo.stop()


def test_checkpoint_round_trip(cartpole_rows, tmp_path):
    config = _config(MARWILConfig, cartpole_rows)
    algo = config.build_algo()
    try:
        algo.train()
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        weights = _weights(algo)
        norm = algo.learner_group._learner.moving_avg_sqd_adv_norms["default_policy"]
    finally:
        algo.stop()
    restored = config.build_algo()
    try:
        restored.restore_from_path(path)
        assert not _changed(weights, _weights(restored))
        assert float(restored.learner_group._learner.moving_avg_sqd_adv_norms["default_policy"]) == float(norm)
        assert restored.train()["num_env_steps_trained_lifetime"] == 64  # the counters went on
    finally:
        restored.stop()


def test_bc_weights_fine_tune_in_ppo(cartpole_rows):
    """BC's module is PPO's: its trained weights load into PPO as they are (the value head stays untrained)."""
    bc = _config(BCConfig, cartpole_rows).build_algo()
    try:
        bc.train()
        weights = bc.learner_group.get_weights()
    finally:
        bc.stop()
    ppo = (PPOConfig().environment("CartPole-v1").rl_module(model_config={"fcnet_hiddens": [8]})
           .debugging(seed=1, logger_config={"type": "none"}).build_algo())
    try:
        ppo.learner_group.set_weights(weights)
        ppo.sync_weights()
        runner_state = ppo.env_runner.module.get_state()
        for key, value in runner_state.items():
            np.testing.assert_array_equal(value, weights["default_policy"][key])
        ppo.train()
    finally:
        ppo.stop()


def test_lagrangian_cql_tunes_alpha_prime(pendulum_rows):
    config = _config(CQLConfig, pendulum_rows, "Pendulum-v1").training(
        train_batch_size_per_learner=32, lagrangian=True, lagrangian_thresh=1.0, critic_lr=1e-2)
    algo = config.build_algo()
    try:
        result = algo.train()
        stats = result["learners"]["default_policy"]
        assert np.isfinite(stats["alpha_prime_loss"]) and stats["alpha_prime_value"] != 1.0
    finally:
        algo.stop()


@pytest.mark.parametrize("make, message", [
    (lambda: BCConfig().environment("CartPole-v1"), "trains from offline data: set config.offline_data"),
    (lambda: PPOConfig().environment("CartPole-v1").offline_data(input_="/data"), "does not train from offline"),
    (lambda: BCConfig().environment("CartPole-v1").offline_data(input_="/data").training(beta=0.5), "beta must be"),
    (lambda: CQLConfig().environment("Pendulum-v1").offline_data(input_="/data").training(n_step=3), "n_step must"),
    (lambda: BCConfig().environment(observation_space=gym.spaces.Discrete(2), action_space=gym.spaces.Discrete(2))
     .offline_data(input_="/data").evaluation(evaluation_interval=1), "evaluates in an env"),
])
def test_configs_that_cannot_work_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make().validate()


def test_cql_needs_box_actions(cartpole_rows):
    with pytest.raises(ValueError, match="CQL's default module needs Box actions"):
        _config(CQLConfig, cartpole_rows).build_algo()


@pytest.mark.parametrize("algorithm", ["BC", "IQL"])
def test_cli_trains_from_a_folder(algorithm, cartpole_rows, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("RELAYRL_RESULTS_DIR", str(tmp_path))
    code = main(["train", algorithm, "--input", cartpole_rows, "--env", "CartPole-v1", "--stop-iters", "2",
                 "--train-batch-size", "16", "--evaluation-duration", "1", "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and summary["training_iteration"] == 2 and summary["config"]["input"] == cartpole_rows
    assert summary["episode_return_mean"] is not None  # the evaluation's return (offline: no training episodes)


def test_algorithm_classes_at_rllibs_paths():
    from relayrl.algorithms.bc import BC as bc_from_package
    from relayrl.algorithms.bc.torch.default_bc_torch_rl_module import DefaultBCTorchRLModule
    from relayrl.algorithms.cql.torch.cql_torch_learner import CQLTorchLearner
    from relayrl.algorithms.marwil.torch.marwil_torch_learner import MARWILTorchLearner

    assert bc_from_package is BC and BCConfig().algo_class is BC
    assert DefaultBCTorchRLModule.__name__ == "DefaultPPOTorchRLModule"
    assert CQLTorchLearner.__name__ == "CQLLearner" and MARWILTorchLearner.__name__ == "MARWILLearner"
