"""PPO with remote EnvRunners: the runners send train-batch columns (the Learner pipeline's first part run on
their own episodes), the Learner finishes the batch (tensors, GAE). Same batch as from the episodes; the
cases it does not cover fall back to episodes."""
import copy

import numpy as np
import torch

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.algorithms.ppo import remote_train_columns
from relayrl.learner.runner_columns import RunnerColumns, finish_on_learner
from relayrl.testing import StatelessCartPole
from relayrl.testing.compare import assert_learners_in_sync


def _config(**runners):
    return (PPOConfig().environment("CartPole-v1")
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=64, **runners)
            .training(train_batch_size=256, minibatch_size=64, num_epochs=2)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_the_runners_columns_finish_into_the_batch_the_episodes_give():
    algo = _config().build_algo()  # in-process: the same episodes through both paths
    try:
        runner, learner = algo.env_runner, algo.learner_group._learner
        algo.train()  # a trained value function: GAE's values are not all alike
        episodes = runner.sample()
        copies = copy.deepcopy(episodes)  # AddOneTsToEpisodesAndTruncate extends each episode it sees
        expected = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes,
                                              explore=False, shared_data={}, metrics=learner.metrics)
        sampled = sum(len(e) for e in copies)
        runner.sample = lambda: copies
        columns, steps, _ = remote_train_columns.sample_columns(runner)
        got = finish_on_learner(learner, RunnerColumns(columns))
        assert steps == sampled
        assert sorted(got["default_policy"]) == sorted(expected["default_policy"])
        for column, value in expected["default_policy"].items():
            assert isinstance(got["default_policy"][column], torch.Tensor)
            assert torch.equal(got["default_policy"][column], value), column
    finally:
        algo.stop()


def _weights(algo):
    return {k: np.array(v, copy=True) for k, v in algo.learner_group.get_weights()["default_policy"].items()}


def test_remote_ppo_trains_on_the_runners_columns():
    algo = _config(num_env_runners=2, num_cpus_per_env_runner=0.5).build_algo()
    try:
        before = _weights(algo)
        for _ in range(2):
            result = algo.train()
        assert algo._samples_remote_train_columns()
        assert result["num_env_steps_sampled_lifetime"] >= 512  # (CartPole's own vector env: plus reset steps)
        assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
        assert any(not np.array_equal(v, before[k]) for k, v in _weights(algo).items())
    finally:
        algo.stop()


def test_two_remote_learners_each_finish_the_whole_batch_and_stay_equal():
    config = _config(num_env_runners=1, num_cpus_per_env_runner=0).learners(num_learners=2)  # 2 CPUs: the Learners
    algo = config.build_algo()
    try:
        algo.train()
        assert algo._samples_remote_train_columns()
        assert_learners_in_sync(algo.learner_group)
    finally:
        algo.stop()


def test_a_custom_learner_connector_or_an_lstm_keeps_the_episodes():
    custom = _config(num_env_runners=1, num_cpus_per_env_runner=0.5).training(learner_connector=lambda obs, act: [])
    lstm = (_config(num_env_runners=1, num_cpus_per_env_runner=0.5).environment(StatelessCartPole)
            .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=16, max_seq_len=8)))
    for config in (custom, lstm):
        algo = config.build_algo()
        try:
            result = algo.train()
            assert not algo._samples_remote_train_columns()
            assert result["num_env_steps_sampled_lifetime"] >= 256  # (CartPole's own vector env: plus reset steps)
        finally:
            algo.stop()
