"""Bit-identical resume: train, save, train more == restore from the checkpoint alone, train more."""
import os

import numpy as np
import pytest
import torch

from relayrl import Algorithm, PPOConfig, RLlibCallback
from relayrl.algorithms.ppo.ppo_learner import PPOLearner
from relayrl.checkpoints import CheckpointError
from relayrl.connectors import MeanStdFilter
from relayrl.testing.compare import assert_same_tree


# SYNC named: its sub-envs' state is checkpointed, so the episodes go on bit for bit (the env's own vector env,
# which a run that leaves the mode unset gets for CartPole, is restarted with new episodes: docs/vector_envs.md).
def _ppo_config(**env_runner_kwargs):
    return (PPOConfig().environment("CartPole-v1")
            .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="SYNC", **env_runner_kwargs)
            .training(train_batch_size=256, minibatch_size=64, num_epochs=2, use_kl_loss=True)
            .debugging(seed=7, logger_config={"type": "none"}))


def make_mean_std_filter(env=None, spaces=None, device=None):
    return MeanStdFilter()


def _learner(algo):
    return algo.learner_group._learner


def _weights(algo):
    return {k: v.clone() for k, v in algo.learner_group.get_module("default_policy").state_dict().items()}


def _resume_and_compare(config, tmp_path, iters_before=3, iters_after=2, trusted=None):
    algo = config.build_algo()
    for _ in range(iters_before):
        algo.train()
    result = algo.save(str(tmp_path / "ckpt"))
    r1 = [algo.train() for _ in range(iters_after)]
    w1, opt1 = _weights(algo), _learner(algo).get_state(components="optimizer")["optimizer"]
    runner_state1 = algo.env_runner.get_state(components=["env_to_module_connector", "metrics"])

    restored = Algorithm.from_checkpoint(result.checkpoint.path, trusted=trusted)
    r2 = [restored.train() for _ in range(iters_after)]
    w2, opt2 = _weights(restored), _learner(restored).get_state(components="optimizer")["optimizer"]

    assert type(restored) is type(algo)
    assert set(w1) == set(w2) and all(torch.equal(w1[k], w2[k]) for k in w1)
    assert_same_tree(opt1, opt2, "optimizer")
    for a, b in zip(r1, r2):
        for key in ("training_iteration", "num_env_steps_sampled_lifetime", "num_env_steps_trained_lifetime"):
            assert a[key] == b[key], key
        for key in ("episode_return_mean", "episode_len_mean", "num_episodes", "num_episodes_lifetime"):
            assert a["env_runners"][key] == b["env_runners"][key], key
        for key in ("total_loss", "policy_loss", "vf_loss", "curr_kl_coeff"):
            assert a["learners"]["default_policy"][key] == b["learners"]["default_policy"][key], key
    runner_state2 = restored.env_runner.get_state(components=["env_to_module_connector", "metrics"])
    assert_same_tree(runner_state1["env_to_module_connector"], runner_state2["env_to_module_connector"])
    algo.stop()
    restored.stop()
    return r1


def test_ppo_resume_is_bit_identical(tmp_path):
    r1 = _resume_and_compare(_ppo_config(), tmp_path)
    # The adaptive KL coefficient moved away from its start value: learner attributes are restored too.
    assert r1[-1]["learners"]["default_policy"]["curr_kl_coeff"] != 0.2


def test_ppo_resume_with_mean_std_filter_is_bit_identical(tmp_path):
    config = _ppo_config(env_to_module_connector=make_mean_std_filter)
    _resume_and_compare(config, tmp_path, trusted=[make_mean_std_filter])  # a function is trusted by name


def test_save_returns_rllib_result_usable_as_path(tmp_path):
    algo = _ppo_config().build_algo()
    algo.train()
    result = algo.save(str(tmp_path / "c"))
    assert result.checkpoint.path == os.fspath(result) == str(result) == str(tmp_path / "c")
    assert os.path.isfile(os.path.join(result, "manifest.json"))
    fresh = algo.save()  # no directory given: a fresh one
    assert os.path.isfile(os.path.join(fresh.checkpoint.path, "manifest.json")) and fresh.path != result.path
    algo.stop()


def test_restore_into_existing_algorithm_and_by_component(tmp_path):
    algo = _ppo_config().build_algo()
    algo.train()
    path = algo.save_to_path(tmp_path / "c")
    saved = _weights(algo)
    algo.train()
    other = _ppo_config().build_algo()
    other.restore(path)
    assert other.iteration == 1
    assert all(torch.equal(saved[k], v) for k, v in _weights(other).items())

    third = _ppo_config().build_algo()
    third.restore_from_path(path, component="learner_group")
    assert third.iteration == 0  # only the learner group was restored
    assert all(torch.equal(saved[k], v) for k, v in _weights(third).items())
    # The env runner acts with the restored weights.
    runner_weights = third.env_runner.module.get_state()
    assert all(np.array_equal(runner_weights[k], saved[k].numpy()) for k in runner_weights)
    # A component's folder restores that component alone (RLlib's nested checkpoint layout).
    fourth = _ppo_config().build_algo()
    fourth.learner_group.restore_from_path(os.path.join(path, "learner_group"))
    assert all(torch.equal(saved[k], v) for k, v in _weights(fourth).items())
    with pytest.raises(CheckpointError, match="no component `learner_grop`.*learner_group"):
        third.restore_from_path(path, component="learner_grop")
    for a in (algo, other, third, fourth):
        a.stop()


def test_rllib_nested_component_paths_restore_that_part(tmp_path):
    """RLlib's scripts restore a module from `<ckpt>/learner_group/learner/rl_module` with that component named
    (its offline_rl examples do); relayrl keeps the nested parts inside the learner_group folder and finds them."""
    algo = _ppo_config().build_algo()
    with torch.no_grad():
        for tensor in algo.learner_group.get_module("default_policy").parameters():
            tensor.add_(0.5)  # weights a fresh build does not have
    saved = _weights(algo)
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    nested = os.path.join(path, "learner_group", "learner", "rl_module")
    other = _ppo_config().build_algo()
    other.restore_from_path(nested, component="learner_group/learner/rl_module")
    assert all(torch.equal(saved[k], v) for k, v in _weights(other).items())
    runner_weights = other.env_runner.module.get_state()  # synced to the EnvRunner too
    assert all(np.array_equal(runner_weights[k], saved[k].numpy()) for k in runner_weights)
    third = _ppo_config().build_algo()
    third.restore_from_path(path, component="learner_group/learner/rl_module")
    assert all(torch.equal(saved[k], v) for k, v in _weights(third).items())
    fourth = _ppo_config().build_algo()
    module = fourth.learner_group.get_module("default_policy")
    module.restore_from_path(os.path.join(nested, "default_policy"))  # the module takes its own state
    assert all(torch.equal(saved[k], v) for k, v in _weights(fourth).items())
    with pytest.raises(CheckpointError, match=r"no component `learner_group/learner/rl_modul`.*'rl_module'"):
        third.restore_from_path(path, component="learner_group/learner/rl_modul")
    for a in (algo, other, third, fourth):
        a.stop()


def test_get_state_components_and_not_components():
    algo = _ppo_config().build_algo()
    state = algo.get_state(components=["learner_group/learner/rl_module", "iteration"])
    assert set(state) == {"learner_group", "iteration"}
    assert set(state["learner_group"]["learner"]) == {"rl_module"}
    state = algo.get_state(not_components=["env_runner", "learner_group/learner/optimizer"])
    assert "env_runner" not in state and "rng" in state
    assert "optimizer" not in state["learner_group"]["learner"]
    assert [name for name, _ in algo.get_checkpointable_components()] == ["learner_group", "env_runner"]
    algo.stop()


def test_lambda_option_is_named_on_from_checkpoint_and_can_be_supplied(tmp_path):
    config = _ppo_config(env_to_module_connector=lambda env=None, spaces=None, device=None: MeanStdFilter())
    algo = config.build_algo()
    algo.train()
    path = algo.save_to_path(tmp_path / "c")  # saving works
    with pytest.raises(CheckpointError, match="env_to_module_connector.*config_overrides"):
        Algorithm.from_checkpoint(path)
    restored = Algorithm.from_checkpoint(path, config_overrides={"env_to_module_connector": make_mean_std_filter})
    assert restored.iteration == 1
    assert_same_tree(algo.env_runner.get_state(components="env_to_module_connector"),
                      restored.env_runner.get_state(components="env_to_module_connector"))
    algo.stop()
    restored.stop()


def no_pieces(env=None, spaces=None):
    return []


def test_every_lambda_option_is_named_in_one_error(tmp_path):
    # (it named the first only: a user with a lambda connector and a lambda policy_mapping_fn had to try twice)
    config = _ppo_config(env_to_module_connector=lambda env=None, spaces=None, device=None: MeanStdFilter(),
                         module_to_env_connector=lambda env=None, spaces=None: [])
    algo = config.build_algo()
    path = algo.save_to_path(tmp_path / "c")
    algo.stop()
    with pytest.raises(CheckpointError, match=r"options `env_to_module_connector`, `module_to_env_connector` could "
                       r"not be stored.*config_overrides=\{'env_to_module_connector': ..., "
                       r"'module_to_env_connector': ...\}"):
        Algorithm.from_checkpoint(path)
    restored = Algorithm.from_checkpoint(path, config_overrides={"env_to_module_connector": make_mean_std_filter,
                                                                 "module_to_env_connector": no_pieces})
    assert restored.config.module_to_env_connector is no_pieces
    restored.stop()


def test_from_checkpoint_checks_the_class(tmp_path):
    from relayrl.algorithms.dqn.dqn import DQN

    algo = _ppo_config().build_algo()
    path = algo.save_to_path(tmp_path / "c")
    with pytest.raises(CheckpointError, match="holds a relayrl.algorithms.ppo.ppo:PPO, not a DQN"):
        DQN.from_checkpoint(path)
    algo.stop()


def test_dqn_resume_with_replay_buffer_is_bit_identical(tmp_path):
    from relayrl.algorithms.dqn.dqn_config import DQNConfig

    config = (DQNConfig().environment("CartPole-v1").env_runners(gym_env_vectorize_mode="SYNC")  # see _ppo_config
              .training(num_steps_sampled_before_learning_starts=32, train_batch_size=16)
              .rl_module(model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": [16]})
              .reporting(min_sample_timesteps_per_iteration=40)
              .debugging(seed=1, logger_config={"type": "none"}))
    algo = config.build_algo()
    for _ in range(3):
        algo.train()
    path = algo.save_to_path(tmp_path / "dqn")
    assert "replay_buffer" in [name for name, _ in algo.get_checkpointable_components()]
    r1 = [algo.train() for _ in range(2)]
    w1 = _weights(algo)  # includes the target networks
    restored = Algorithm.from_checkpoint(path)
    assert len(restored.local_replay_buffer) > 0
    r2 = [restored.train() for _ in range(2)]
    w2 = _weights(restored)
    assert any("target" in k for k in w1)
    assert set(w1) == set(w2) and all(torch.equal(w1[k], w2[k]) for k in w1)
    assert len(restored.local_replay_buffer) == len(algo.local_replay_buffer)
    for a, b in zip(r1, r2):
        assert a["num_env_steps_sampled_lifetime"] == b["num_env_steps_sampled_lifetime"]
        assert a["num_env_steps_trained_lifetime"] == b["num_env_steps_trained_lifetime"]
        assert a["env_runners"]["episode_return_mean"] == b["env_runners"]["episode_return_mean"]
    algo.stop()
    restored.stop()


class CountingCallbacks(RLlibCallback):
    """Callbacks with their own state: the number of train results seen."""

    def __init__(self):
        super().__init__()
        self.results_seen = 0
        self.checkpoints_loaded = 0

    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs):
        self.results_seen += 1

    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        self.checkpoints_loaded += 1

    def get_state(self):
        return {"results_seen": self.results_seen}

    def set_state(self, state):
        self.results_seen = state["results_seen"]


def test_callbacks_state_is_restored(tmp_path):
    algo = _ppo_config().callbacks(CountingCallbacks).build_algo()
    algo.train()
    algo.train()
    path = algo.save_to_path(tmp_path / "c")
    restored = Algorithm.from_checkpoint(path, trusted=[CountingCallbacks])  # (a user's class: passed)
    assert isinstance(restored.callbacks, CountingCallbacks) and restored.callbacks.results_seen == 2
    assert restored.callbacks.checkpoints_loaded == 1  # on_checkpoint_loaded fired once the state was in
    algo.restore(path)
    assert algo.callbacks.checkpoints_loaded == 1
    algo.stop()
    restored.stop()


class FrozenLearner(PPOLearner):
    def should_module_be_updated(self, module_id, multi_agent_batch=None):
        return False


def test_checkpoint_trainable_policies_only_leaves_out_frozen_modules():
    config = _ppo_config().learners(learner_class=FrozenLearner)
    full = config.build_algo()
    assert "default_policy" in full.get_state()["learner_group"]["learner"]["rl_module"]
    only_trainable = config.copy(copy_frozen=False).checkpointing(checkpoint_trainable_policies_only=True).build_algo()
    learner_state = only_trainable.get_state()["learner_group"]["learner"]
    assert learner_state["rl_module"] == {} and learner_state["optimizer"] == {}
    full.stop()
    only_trainable.stop()
