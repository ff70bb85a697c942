"""Checkpoints saved while a default was different still load as they were saved."""
import numpy as np
import pytest

from relayrl import Algorithm
from relayrl.algorithms.dqn import DQNConfig
from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_REPLAY_BUFFER_CONFIG
from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.sac_config import RLLIB_SAC_REPLAY_BUFFER_CONFIG
from relayrl.replay import PrioritizedEpisodeReplayBuffer


def _sac_config():
    return (SACConfig().environment("Pendulum-v1")
            .training(replay_buffer_config={"capacity": 5000}, num_steps_sampled_before_learning_starts=50,
                      train_batch_size_per_learner=16)
            .rl_module(model_config={"fcnet_hiddens": [16, 16]})
            .reporting(min_sample_timesteps_per_iteration=60).debugging(seed=3, logger_config={"type": "none"}))


def _dqn_config():
    return (DQNConfig().environment("CartPole-v1")
            .training(replay_buffer_config={"capacity": 5000}, num_steps_sampled_before_learning_starts=50,
                      train_batch_size_per_learner=16)
            .rl_module(model_config={"fcnet_hiddens": [16]})
            .reporting(min_sample_timesteps_per_iteration=60).debugging(seed=3, logger_config={"type": "none"}))


@pytest.mark.parametrize("make_config, config_cls, old_default", [
    (_sac_config, SACConfig, RLLIB_SAC_REPLAY_BUFFER_CONFIG), (_dqn_config, DQNConfig, RLLIB_DQN_REPLAY_BUFFER_CONFIG)])
def test_checkpoint_from_the_prioritized_default_loads_its_buffer(tmp_path, monkeypatch, make_config, config_cls,
                                                                  old_default):
    # SAC's and DQN's default buffer was prioritized until 2026-11-29; a config that gave no type stored none.
    # Saved under that default, the checkpoint must rebuild the prioritized buffer its state holds, not today's
    # default. (tests/checkpoints/test_checkpoint_compat.py loads a real DQN checkpoint of that time too.)
    with monkeypatch.context() as old_version:
        old_version.setattr(config_cls, "_REPLAY_BUFFER_DEFAULTS", (old_default,))
        algo = make_config().build_algo()
        algo.train()
        algo.train()
        saved = algo.local_replay_buffer
        assert isinstance(saved, PrioritizedEpisodeReplayBuffer)
        priorities = saved.get_state()["priorities_alpha"]
        algo.save_to_path(tmp_path / "ckpt")
        algo.stop()
    assert "type" not in make_config().replay_buffer_config

    restored = Algorithm.from_checkpoint(tmp_path / "ckpt")
    try:
        buffer = restored.local_replay_buffer
        assert isinstance(buffer, PrioritizedEpisodeReplayBuffer)
        assert (buffer.alpha, buffer.beta, buffer.capacity) == (0.6, 0.4, 5000)
        np.testing.assert_array_equal(buffer.get_state()["priorities_alpha"], priorities)
        restored.train()
    finally:
        restored.stop()
