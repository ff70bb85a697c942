"""IQL from offline files: RLlib's options and defaults, refused values, one update that trains every network and
reports IQL's losses (Box and Discrete actions), and a checkpoint that resumes the exact same updates."""
import copy

import numpy as np
import pytest

from relayrl import IQL, IQLConfig
from relayrl.learner.learner import NUM_ENV_STEPS_SAMPLED_LIFETIME

LOSSES = ("policy_loss", "qf_loss", "qf_twin_loss", "value_loss", "total_loss")


def _config(data, env="Pendulum-v1", **training):
    return (IQLConfig().environment(env).offline_data(input_=data)
            .training(train_batch_size_per_learner=32, **training)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))


def _weights(algo):
    return {k: v.copy() for k, v in algo.learner_group.get_weights()["default_policy"].items()}


def test_rllibs_options_and_defaults():
    config = IQLConfig()
    assert config.algo_class is IQL
    assert (config.beta, config.expectile, config.twin_q, config.tau, config.target_network_update_freq) == (
        0.1, 0.8, True, 1.0, 0)
    assert (config.actor_lr, config.critic_lr, config.value_lr, config.lr) == (3e-4, 3e-4, 3e-4, None)
    config.training(beta=3.0, expectile=0.7, value_lr=1e-3, tau=0.005)
    assert (config.beta, config.expectile, config.value_lr, config.tau) == (3.0, 0.7, 1e-3, 0.005)


@pytest.mark.parametrize("options, message", [
    ({"expectile": 1.0}, "expectile must be a float in the open interval"),
    ({"expectile": 0.0}, "expectile must be a float in the open interval"),
    ({"expectile": "high"}, "expectile must be a float in the open interval"),
    ({"beta": 0.0}, "beta must be a positive float"),
    ({"value_lr": -1e-3}, "value_lr must be a positive float or a schedule"),
    ({"n_step": 3}, "n_step must be 1 .IQL learns from single logged transitions"),
])
def test_bad_values_are_refused_by_name(options, message):
    with pytest.raises(ValueError, match=message):
        IQLConfig().training(**options)


@pytest.mark.parametrize("make, message", [
    (lambda: IQLConfig().environment("Pendulum-v1"), "trains from offline data: set config.offline_data"),
    (lambda: IQLConfig().environment("Pendulum-v1").offline_data(input_="/data").training(lr=1e-3),
     "does not use `lr`"),
])
def test_configs_that_cannot_work_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make().validate()


@pytest.mark.parametrize("data, env", [("pendulum_rows", "Pendulum-v1"), ("cartpole_rows", "CartPole-v1")])
def test_one_update_trains_every_network_and_reports_iqls_losses(data, env, request):
    algo = _config(request.getfixturevalue(data), env).build_algo()
    try:
        before = _weights(algo)
        result = algo.train()
        after = _weights(algo)
    finally:
        algo.stop()
    stats = result["learners"]["default_policy"]
    assert all(np.isfinite(stats[name]) for name in LOSSES), stats
    assert result["num_env_steps_trained_lifetime"] == 32  # one update per train() (dataset_num_iters_per_learner)
    for network in ("pi_encoder", "pi.", "qf_encoder", "qf.", "qf_twin_encoder", "qf_twin.", "vf_encoder", "vf."):
        keys = [k for k in before if k.startswith(network)]
        assert keys and any(not np.array_equal(before[k], after[k]) for k in keys), network
    for key in (k for k in after if k.startswith("_target_")):  # tau = 1.0 (RLlib's): the targets are copies
        np.testing.assert_array_equal(after[key], after[key[len("_target_"):]])


def test_checkpoint_resumes_the_same_updates(pendulum_rows, tmp_path):
    """Restored: the same weights, targets, optimiser moments and counters, so the next update is the same."""
    config = _config(pendulum_rows, tau=0.5, beta=3.0)
    algo = config.build_algo()
    try:
        algo.train()
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        batch = algo.offline_data.sample(32)
        update = dict(timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 64}, num_epochs=1, minibatch_size=32,
                      shuffle_batch_per_epoch=False, reduce_metrics=False)
        algo.learner_group.update(**copy.deepcopy(batch), **update)
        expected = _weights(algo)
    finally:
        algo.stop()
    restored = config.build_algo()
    try:
        restored.restore_from_path(path)
        restored.learner_group.update(**batch, **update)
        resumed = _weights(restored)
        assert restored.train()["num_env_steps_trained_lifetime"] == 64  # the counters went on
    finally:
        restored.stop()
    assert set(resumed) == set(expected) and any(k.startswith("_target_") for k in expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(resumed[key], value, err_msg=key)


def test_classes_at_rllibs_paths():
    from relayrl.algorithms.iql import IQL as from_package
    from relayrl.algorithms.iql.torch.default_iql_torch_rl_module import DefaultIQLTorchRLModule
    from relayrl.algorithms.iql.torch.iql_torch_learner import IQLTorchLearner

    assert from_package is IQL and IQLConfig().get_default_rl_module_spec().module_class is DefaultIQLTorchRLModule
    assert IQLTorchLearner is IQLConfig().get_default_learner_class()
