"""Atari: `ALE/...` ids get the standard preprocessing (gymnasium's AtariPreprocessing, FIRE reset, 4 frames stacked
channels last), switchable through env_config; PPO's default CNN trains on it."""
import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ale_py")  # the `atari` extra; the test extra installs it

from relayrl import PPOConfig  # noqa: E402
from relayrl.env.env_context import EnvContext  # noqa: E402
from relayrl.env.registry import make_env_creator  # noqa: E402
from relayrl.env.wrappers.atari_wrappers import register_atari_envs, wrap_atari_for_new_api_stack  # noqa: E402


def make(env_config):
    return make_env_creator("ALE/Pong-v5")(EnvContext(env_config, 0))


def test_ale_ids_get_the_standard_preprocessing():
    env = make({})
    obs, _ = env.reset(seed=0)
    assert obs.shape == (84, 84, 4) and obs.dtype == np.uint8 and env.observation_space.shape == (84, 84, 4)
    obs, reward, terminated, truncated, _ = env.step(0)
    assert obs.shape == (84, 84, 4) and isinstance(terminated, bool)
    wrappers = []
    layer = env
    while hasattr(layer, "env"):
        wrappers.append(type(layer).__name__)
        layer = layer.env
    assert "AtariPreprocessing" in wrappers and "FireReset" in wrappers
    env.close()


def test_env_config_switches_parts_off():
    small = make({"dim": 64, "framestack": 1, "fire_reset": False})
    assert small.reset(seed=0)[0].shape == (64, 64, 1)
    raw = make({"atari_preprocessing": False})
    assert raw.reset(seed=0)[0].shape == (210, 160, 3)


def test_wrap_for_users_who_build_envs_themselves():
    register_atari_envs()
    env = wrap_atari_for_new_api_stack(gym.make("ALE/Breakout-v5", frameskip=1), dim=42, framestack=2)
    assert env.reset(seed=0)[0].shape == (42, 42, 2)


def test_ppo_trains_on_pong_with_the_default_cnn():
    config = (PPOConfig().environment("ALE/Pong-v5").env_runners(num_envs_per_env_runner=2)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["num_env_steps_trained_lifetime"] == 64
        assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
    finally:
        algo.stop()
