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
