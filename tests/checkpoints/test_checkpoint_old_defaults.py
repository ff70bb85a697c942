"""Checkpoints saved while a default was different still load as they were saved."""
import numpy as np
import pytest

from relayrl import Algorithm
from relayrl.algorithms.dqn import DQNConfig
from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_REPLAY_BUFFER_CONFIG
from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.sac_config import RLLIB_SAC_REPLAY_BUFFER_CONFIG
from relayrl.replay import PrioritizedEpisodeReplayBuffer


def _small_config(config_cls, env: str, fcnet_hiddens: list):
    """A config that names no buffer type, as a user's partial replay_buffer_config."""
    return (config_cls().environment(env)
            .training(replay_buffer_config={"capacity": 5000}, num_steps_sampled_before_learning_starts=50,
                      train_batch_size_per_learner=16)
            .rl_module(model_config={"fcnet_hiddens": fcnet_hiddens})
            .reporting(min_sample_timesteps_per_iteration=60).debugging(seed=3, logger_config={"type": "none"}))


@pytest.mark.parametrize("config_cls, env, fcnet_hiddens, old_default", [
    (SACConfig, "Pendulum-v1", [16, 16], RLLIB_SAC_REPLAY_BUFFER_CONFIG),
    (DQNConfig, "CartPole-v1", [16], RLLIB_DQN_REPLAY_BUFFER_CONFIG)])
def test_checkpoint_from_the_prioritized_default_loads_its_buffer(tmp_path, monkeypatch, config_cls, env,
                                                                  fcnet_hiddens, old_default):
    # SAC's and DQN's default buffer was prioritized until 2026-11-29; a config that gave no type stored none.
    # Saved under that default, the checkpoint must rebuild the prioritized buffer its state holds, not today's
    # default. (tests/checkpoints/test_checkpoint_compat.py loads a real DQN checkpoint of that time too.)
    with monkeypatch.context() as old_version:
        old_version.setattr(config_cls, "_REPLAY_BUFFER_DEFAULTS", (old_default,))
        algo = _small_config(config_cls, env, fcnet_hiddens).build_algo()
        algo.train()
        algo.train()
        saved = algo.local_replay_buffer
        assert isinstance(saved, PrioritizedEpisodeReplayBuffer)
        priorities = saved.get_state()["priorities_alpha"]
        algo.save_to_path(tmp_path / "ckpt")
        algo.stop()
    assert "type" not in _small_config(config_cls, env, fcnet_hiddens).replay_buffer_config

    restored = Algorithm.from_checkpoint(tmp_path / "ckpt")
    try:
        buffer = restored.local_replay_buffer
        assert isinstance(buffer, PrioritizedEpisodeReplayBuffer)
        assert (buffer.alpha, buffer.beta, buffer.capacity) == (0.6, 0.4, 5000)
        np.testing.assert_array_equal(buffer.get_state()["priorities_alpha"], priorities)
        restored.train()
    finally:
        restored.stop()


def _stateful_config(config_cls, model_config):
    from relayrl.algorithms.ppo import PPOConfig

    config = config_cls().environment("CartPole-v1").rl_module(model_config=model_config)
    config.debugging(seed=3, logger_config={"type": "none"})
    if config_cls is PPOConfig:
        return config.env_runners(num_envs_per_env_runner=2).training(train_batch_size=128, num_epochs=1)
    return config.training(num_steps_sampled_before_learning_starts=40).reporting(min_sample_timesteps_per_iteration=60)


@pytest.mark.parametrize("algo", ["PPO", "DQN"])
@pytest.mark.parametrize("model_config", [{"use_lstm": True}, "DefaultModelConfig(use_lstm=True)"])
def test_a_stateful_checkpoint_saved_before_its_defaults_changed_loads_as_saved(tmp_path, monkeypatch, algo,
                                                                                 model_config):
    # A stateful run (use_lstm=True) gets measured defaults where the user set nothing (resolved_defaults/). Saved
    # before those defaults existed or changed, its config lists only what the user set; on restore the fields it
    # left to the defaults of its time must keep them, not take today's (the module's layers would differ).
    import torch

    from relayrl import DefaultModelConfig
    from relayrl.algorithms.ppo import PPOConfig

    config_cls = {"PPO": PPOConfig, "DQN": DQNConfig}[algo]
    if isinstance(model_config, str):
        model_config = DefaultModelConfig(use_lstm=True)
    with monkeypatch.context() as old_version:
        for name, value in [("_STATEFUL_DEFAULTS", {}), ("_STATEFUL_MODEL_DEFAULTS", {}), ("_STATEFUL_FRAGMENT", None),
                            ("_STATEFUL_SEQUENCES_PER_MINIBATCH", None)]:
            old_version.setattr(config_cls, name, value)
        algo = _stateful_config(config_cls, model_config).build_algo()
        assert algo.resolved_defaults == []
        algo.train()
        saved_lr, saved_weights = algo.config.lr, algo.get_module().state_dict()
        algo.save_to_path(tmp_path / "ckpt")
        algo.stop()
    assert _stateful_config(config_cls, model_config).stateful_module_defaults()[1]  # today's differ

    restored = Algorithm.from_checkpoint(tmp_path / "ckpt")
    try:
        assert restored.resolved_defaults == [] and restored.config.lr == saved_lr
        weights = restored.get_module().state_dict()
        assert weights.keys() == saved_weights.keys()
        assert all(torch.equal(weights[key], saved_weights[key]) for key in weights)
        restored.train()
    finally:
        restored.stop()


def test_a_model_config_given_over_a_restored_one_counts_only_its_own_fields():
    config = DQNConfig().rl_module(model_config={"use_lstm": True})
    config.mark_given()
    assert "lstm_cell_size" in config.given_model_fields()
    config.rl_module(model_config={"use_lstm": True, "fcnet_hiddens": [32]})
    assert config.given_model_fields() == {"use_lstm", "fcnet_hiddens"}
