"""PPO end to end: result keys, accessors, weight sync, env access, stop(), custom RLModules, a quick learning check."""
import importlib.util
import math
import pathlib

import numpy as np
import pytest

from relayrl import PPOConfig, RLModuleSpec
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.env.env_runner import EnvRunner
from relayrl.env.env_runner_group import EnvRunnerGroup
from relayrl.learner.learner_group import LearnerGroup
from relayrl.testing import CorridorEnv, CountingEnv

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "custom_rl_module.py"


def small_config(env=CorridorEnv, env_config=None, **training):
    training = {"train_batch_size": 200, "minibatch_size": 50, "num_epochs": 2, **training}
    return (PPOConfig().environment(env, env_config=env_config or {}).env_runners(num_envs_per_env_runner=2)
            .training(**training).rl_module(model_config={"fcnet_hiddens": [16]}).debugging(seed=0))


@pytest.fixture
def algo():
    algo = small_config().build_algo()
    yield algo
    algo.stop()


def test_train_result_keys(algo):
    result = algo.train()
    env = result["env_runners"]
    for key in ("episode_return_mean", "episode_return_min", "episode_return_max", "episode_len_mean",
                "num_episodes"):
        assert key in env and np.isfinite(env[key]), key
    assert env["episode_return_min"] <= env["episode_return_mean"] <= env["episode_return_max"]
    assert env["num_episodes"] > 0
    assert env["num_env_steps_sampled_lifetime"] == 200 == result["num_env_steps_sampled_lifetime"]
    learner = result["learners"][DEFAULT_MODULE_ID]
    for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "total_loss", "curr_kl_coeff"):
        assert key in learner and np.isfinite(learner[key]), key
    assert 0 < learner["entropy"] <= math.log(2) + 1e-6
    assert result["training_iteration"] == 1 and result["time_this_iter_s"] > 0
    assert {"training_iteration", "env_runner_sampling_timer", "learner_update_timer"} <= set(result["timers"])
    second = algo.train()
    assert second["training_iteration"] == 2
    assert second["num_env_steps_sampled_lifetime"] == second["env_runners"]["num_env_steps_sampled_lifetime"] == 400
    assert second["env_runners"]["num_env_steps_sampled"] == 200


def test_accessors(algo):
    assert isinstance(algo.env_runner, EnvRunner)
    assert isinstance(algo.env_runner_group, EnvRunnerGroup) and algo.workers is algo.env_runner_group
    assert algo.env_runner is algo.env_runner_group.local_env_runner
    assert isinstance(algo.learner_group, LearnerGroup)
    module = algo.get_module()
    assert isinstance(module, DefaultPPOTorchRLModule) and module is algo.get_module(DEFAULT_MODULE_ID)
    assert algo.get_module("no_such_module") is None
    learner_module = algo.learner_group.get_module(DEFAULT_MODULE_ID)
    assert not learner_module.inference_only and hasattr(learner_module, "vf")


def _assert_runner_has_learner_weights(algo):
    learner_weights = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
    runner_weights = algo.env_runner.module.get_state()
    assert set(runner_weights) <= set(learner_weights)
    for key, value in runner_weights.items():
        np.testing.assert_array_equal(value, learner_weights[key])


def test_weights_synced_at_start_and_after_train(algo):
    _assert_runner_has_learner_weights(algo)
    before = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
    algo.train()
    after = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
    assert any(not np.array_equal(before[k], after[k]) for k in before)
    _assert_runner_has_learner_weights(algo)


def test_seed_snippet_sets_task_on_all_sub_envs(algo):
    task = 7
    algo.workers.foreach_worker(lambda ev: ev.foreach_env(lambda env: env.set_task(task)))
    assert algo.env_runner_group.foreach_env_runner(lambda ev: ev.foreach_env(lambda env: env.get_task())) == [[7, 7]]
    # CorridorEnv's task is its length: episodes now need at least 7 steps.
    episodes = algo.env_runner.sample(num_episodes=3)
    assert all(len(e) >= 7 for e in episodes if e.is_terminated)


def test_curriculum_pattern_recreates_envs_with_new_config(algo):
    """RLlib's curriculum example: change each runner's env_config, then make_env() (config is frozen on the algo)."""
    def set_length(env_runner, length):
        env_runner.config.environment(env_config={"corridor_length": length})
        env_runner.make_env()

    algo.train()
    algo.env_runner_group.foreach_worker(lambda ev: set_length(ev, 9))
    assert algo.env_runner.foreach_env(lambda env: env.corridor_length) == [9, 9]
    assert algo.config.env_config == {}  # the algorithm's own (frozen) config is untouched
    episodes = algo.env_runner.sample(num_episodes=2)
    assert all(len(e) >= 9 for e in episodes if e.is_terminated)
    assert np.isfinite(algo.train()["learners"][DEFAULT_MODULE_ID]["total_loss"])


class ClosingEnv(CountingEnv):
    closed = []

    def close(self):
        ClosingEnv.closed.append(self.vector_index)
        super().close()


@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_stop_closes_envs(mode):
    ClosingEnv.closed.clear()
    algo = small_config(ClosingEnv).env_runners(gym_env_vectorize_mode=mode).build_algo()
    algo.train()
    env = algo.env_runner.env
    algo.stop()
    assert algo.env_runner.env is None
    assert env.closed
    if mode == "SYNC":
        assert sorted(ClosingEnv.closed) == [0, 1]


def test_ppo_learns_corridor_quickly():
    algo = (PPOConfig().environment(CorridorEnv, env_config={"corridor_length": 5})
            .env_runners(num_envs_per_env_runner=4)
            .training(train_batch_size=400, minibatch_size=100, num_epochs=6, lr=0.003)
            .rl_module(model_config={"fcnet_hiddens": [16]}).debugging(seed=0).build_algo())
    returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(10)]
    algo.stop()
    assert returns[-1] >= 0.5, returns  # optimum 0.6 (5 steps right)
    assert returns[-1] > returns[0]


def test_seeded_runs_are_reproducible():
    def run():
        algo = small_config().build_algo()
        out = [algo.train()["learners"][DEFAULT_MODULE_ID]["total_loss"] for _ in range(2)]
        algo.stop()
        return out

    assert run() == run()


# -- custom RLModule -------------------------------------------------------------------------------------
def _load_example():
    spec = importlib.util.spec_from_file_location("custom_rl_module_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_custom_rl_module_replaces_default():
    example = _load_example()
    config = (small_config(env="CartPole-v1")
              .rl_module(rl_module_spec=RLModuleSpec(module_class=example.ActorCriticModule),
                         model_config={"hidden_size": 12}))
    algo = config.build_algo()
    try:
        runner_module = algo.get_module()
        learner_module = algo.learner_group.get_module(DEFAULT_MODULE_ID)
        assert type(runner_module) is example.ActorCriticModule
        assert type(learner_module) is example.ActorCriticModule
        assert runner_module.inference_only and not hasattr(runner_module, "value_net")
        assert hasattr(learner_module, "value_net")
        assert runner_module.policy_net[0].out_features == 12  # model_config reached the module
        result = algo.train()
        assert np.isfinite(result["learners"][DEFAULT_MODULE_ID]["vf_loss"])
        _assert_runner_has_learner_weights(algo)
    finally:
        algo.stop()


def test_custom_rl_module_example_main_returns_result():
    example = _load_example()
    result = example.main(["--stop-iters", "1", "--seed", "3"])
    assert result["training_iteration"] == 1
    assert "episode_return_mean" in result["env_runners"]


@pytest.mark.parametrize("window, expected", [(3, [3.0, 23 / 3, 10.0]), (100, [3.0, 32 / 6, 52 / 8])])
def test_episode_return_mean_smooths_over_last_n_episodes(window, expected):
    algo = (PPOConfig().environment(CountingEnv, env_config={"episode_len": 2})
            .env_runners(num_envs_per_env_runner=1, rollout_fragment_length=8)  # one env: 4 episodes per call
            .training(train_batch_size=8, minibatch_size=4, num_epochs=1)
            .reporting(metrics_num_episodes_for_smoothing=window).build_algo())
    try:
        means = [algo.train()["env_runners"]["episode_return_mean"]]  # 4 episodes, return 3 each
        algo.env_runner.foreach_env(lambda env: setattr(env, "episode_len", 4))
        means += [algo.train()["env_runners"]["episode_return_mean"] for _ in range(2)]  # 2 x return 10 each
        np.testing.assert_allclose(means, expected)
    finally:
        algo.stop()


def test_custom_learner_class_from_config_is_used():
    from relayrl.algorithms.ppo.ppo_learner import PPOLearner

    calls = []

    class CountingLearner(PPOLearner):
        def after_gradient_based_update(self, *, timesteps):
            calls.append(timesteps["num_env_steps_sampled_lifetime"])
            super().after_gradient_based_update(timesteps=timesteps)

    config = (PPOConfig().environment("CartPole-v1").learners(learner_class=CountingLearner)
              .env_runners(gym_env_vectorize_mode="SYNC")  # every step an env step: exact counts
              .training(train_batch_size=200, minibatch_size=50, num_epochs=1))
    algo = config.build_algo()
    try:
        algo.train()
        algo.train()
    finally:
        algo.stop()
    assert calls == [200, 400]
