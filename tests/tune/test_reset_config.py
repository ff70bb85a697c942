"""Algorithm.reset_config: mutable hyper-parameters reach the optimiser, the loss and the runners in
place; changes needing a rebuild are refused without changing anything. Only the last test uses Ray."""
import sys

import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.learner.optimizers import make_adam
from relayrl.testing.envs import CountingEnv


def _config(**training):
    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": 5})
            .env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=40, minibatch_size=20, num_epochs=1, lr=1e-3, **training)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0))


@pytest.fixture
def algo():
    algo = _config().build_algo()
    yield algo
    algo.stop()


def _learner(algo):
    return algo.learner_group.foreach_learner(lambda learner: learner)[0]


def _param_group_lrs(algo):
    learner = _learner(algo)
    return [g["lr"] for _, opt in learner.get_optimizers_for_module("default_policy") for g in opt.param_groups]


def test_lr_reaches_every_param_group_now_and_after_an_update(algo):
    algo.train()
    learner, module = _learner(algo), algo.get_module()
    optimizer = learner.get_optimizer("default_policy")
    steps_before = max(int(s["step"]) for s in optimizer.state.values())
    assert algo.reset_config({"lr": 5e-4}) is True
    assert algo.config.lr == 5e-4
    assert _param_group_lrs(algo) == [5e-4]
    algo.train()
    assert _param_group_lrs(algo) == [5e-4]
    # In place: same learner, module and optimiser, whose Adam moments kept counting.
    assert _learner(algo) is learner and algo.get_module() is module
    assert learner.get_optimizer("default_policy") is optimizer
    assert max(int(s["step"]) for s in optimizer.state.values()) == 2 * steps_before


def test_lr_schedule_applies_at_the_current_timestep(algo):
    algo.train()  # 40 env steps sampled
    steps = algo._counters["num_env_steps_sampled_lifetime"]
    assert algo.reset_config({"lr": [[0, 1e-3], [2 * steps, 0.0]]})
    assert _param_group_lrs(algo) == [pytest.approx(5e-4)]


def test_optimizer_with_its_own_lr_is_left_alone(algo):
    learner = _learner(algo)
    extra = make_adam([torch.nn.Parameter(torch.zeros(1))], lr=0.5)
    learner.register_optimizer(module_id="default_policy", optimizer_name="extra", optimizer=extra,
                               lr_or_lr_schedule=0.5)
    assert algo.reset_config({"lr": 1e-4})
    assert extra.param_groups[0]["lr"] == 0.5
    assert learner.get_optimizer("default_policy").param_groups[0]["lr"] == 1e-4


def test_loss_options_reach_the_learner(algo):
    assert algo.reset_config({"clip_param": 0.05, "vf_clip_param": 3.0, "vf_loss_coeff": 0.1,
                              "kl_target": 0.5, "kl_coeff": 0.7, "use_kl_loss": False})
    learner = _learner(algo)
    assert learner.config is algo.config
    assert (learner.config.clip_param, learner.config.vf_clip_param, learner.config.vf_loss_coeff) == (0.05, 3.0, 0.1)
    assert learner.config.kl_target == 0.5
    assert learner.curr_kl_coeffs == {"default_policy": 0.7}  # the adaptive coefficient restarts


def test_clip_param_changes_the_loss_value(algo):
    """Same weights, same batch: a different clip_param gives a different loss."""
    episodes = algo.env_runner.sample(num_timesteps=40)
    learner = _learner(algo)
    state = learner.get_state()

    def loss_after_update():
        learner.set_state(state)
        results = learner.update(episodes=episodes, timesteps={}, num_epochs=1, minibatch_size=40)
        return results["default_policy"]["policy_loss"]

    algo.reset_config({"clip_param": 1e-6})
    tight = loss_after_update()
    algo.reset_config({"clip_param": 10.0})
    loose = loss_after_update()
    assert tight != loose


def test_entropy_coeff_reaches_the_loss(algo):
    assert algo.reset_config({"entropy_coeff": 0.25})
    result = algo.train()
    assert result["learners"]["default_policy"]["curr_entropy_coeff"] == pytest.approx(0.25)


def test_gamma_and_lambda_reach_the_advantage_connector(algo):
    assert algo.reset_config({"gamma": 0.5, "lambda": 0.25})
    learner = _learner(algo)
    gae = learner._learner_connector["GeneralAdvantageEstimation"][0]
    assert (gae.gamma, gae.lambda_) == (0.5, 0.25)
    assert algo.config.lambda_ == 0.25


def test_batch_sizes_and_epochs(algo):
    assert algo.reset_config({"train_batch_size": 20, "minibatch_size": 10, "num_epochs": 2})
    result = algo.train()
    assert result["num_env_steps_sampled_lifetime"] == 20
    assert algo.env_runner.config.train_batch_size == 20
    assert algo.env_runner.config.get_rollout_fragment_length() == 10  # 20 steps over 2 envs


def test_explore_reaches_the_runner(algo):
    assert algo.reset_config({"explore": False})
    assert algo.env_runner.config.explore is False


def test_env_config_recreates_the_envs_only_when_changed(algo):
    env_before = algo.env_runner.env
    assert algo.reset_config({"lr": 2e-3})
    assert algo.env_runner.env is env_before
    assert algo.reset_config({"env_config": {"episode_len": 3}})
    assert algo.env_runner.env is not env_before
    lengths = {e.get_return() for e in algo.env_runner.sample(num_episodes=2)}
    assert lengths == {6.0}  # 1 + 2 + 3: the new episode length is in force


def test_full_to_dict_with_one_change(algo):
    new = algo.config.to_dict()
    new["lr"] = 7e-4
    new["__trial_info__"] = object()  # Tune's private entries are ignored
    assert algo.reset_config(new)
    assert _param_group_lrs(algo) == [7e-4]


def test_accepts_an_algorithm_config(algo):
    assert algo.reset_config(_config(entropy_coeff=0.1))
    assert algo.config.entropy_coeff == 0.1


@pytest.mark.parametrize("change", [
    {"model_config": {"fcnet_hiddens": [16]}},
    {"num_env_runners": 1},
    {"num_envs_per_env_runner": 4},
    {"env": "CartPole-v1"},
    {"seed": 3},
    {"lr": 2e-3, "model_config": {"fcnet_hiddens": [16]}},  # one rebuild-only change refuses all
])
def test_refuses_changes_that_need_a_rebuild(algo, change):
    config_before = algo.config
    env_before = algo.env_runner.env
    assert algo.reset_config(change) is False
    assert algo.config is config_before
    assert _param_group_lrs(algo) == [1e-3]
    assert algo.env_runner.env is env_before


def test_bad_input_raises(algo):
    with pytest.raises(ValueError, match="clip_parm"):
        algo.reset_config({"clip_parm": 0.1})
    with pytest.raises(ValueError, match="lr"):
        algo.reset_config({"lr": -1.0})
    with pytest.raises(TypeError, match="AlgorithmConfig or a dict"):
        algo.reset_config(0.1)
    assert algo.config.lr == 1e-3


def test_restore_keeps_the_current_hyperparameters(algo, tmp_path):
    """Tune's PBT exploit: reset_config(perturbed) then load_checkpoint(donor). The weights come from the
    checkpoint, the perturbed lr stays in force (the optimiser state load must not bring back the old lr)."""
    algo.train()
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    saved = _learner(algo).get_weights()
    algo.train()
    assert algo.reset_config({"lr": 3e-4, "entropy_coeff": 0.05})
    algo.load_checkpoint(path)
    restored = _learner(algo).get_weights()
    for key, value in saved["default_policy"].items():
        assert np.array_equal(restored["default_policy"][key], value)
    assert algo.iteration == 1
    assert algo.config.lr == 3e-4 and algo.config.entropy_coeff == 0.05
    assert _param_group_lrs(algo) == [3e-4]


def test_functions_compare_by_code_and_captured_values():
    """Tune ships configs with cloudpickle, which recreates script-defined functions as new objects."""
    import pickle

    from ray import cloudpickle

    from relayrl.tune.reset_config import same_value

    def make(path):
        def on_train_result(**kwargs):
            return path
        return on_train_result

    shipped = pickle.loads(cloudpickle.dumps(make("a")))  # by value: this test module is not importable there
    assert shipped is not make("a") and same_value(make("a"), shipped)
    assert not same_value(make("a"), make("b"))
    assert not same_value(make("a"), lambda **kwargs: "a")


@pytest.mark.slow
def test_remote_env_runners_get_the_new_options(ray_session):
    """With Ray EnvRunner actors the changed options travel through foreach_env_runner."""
    ray_session.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    algo = _config().env_runners(num_env_runners=1, num_cpus_per_env_runner=0.5).build_algo()
    try:
        assert algo.reset_config({"explore": False, "env_config": {"episode_len": 3}, "lr": 5e-4})
        remote = algo.env_runner_group.foreach_env_runner(
            lambda r: (r.config.explore, r.config.env_config, [e.episode_len for e in r.env.envs]),
            local_env_runner=False)
        assert remote == [(False, {"episode_len": 3}, [3, 3])]
        assert _param_group_lrs(algo) == [5e-4]
        assert algo.train()["env_runners"]["episode_return_mean"] == 6.0  # 1 + 2 + 3
    finally:
        algo.stop()
