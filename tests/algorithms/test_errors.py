"""User mistakes fail early, once, with a message that names the problem and the fix."""
import gymnasium as gym
import numpy as np
import pytest

import relayrl
from relayrl import PPOConfig
from relayrl.testing import CountingEnv, SpacesEnv

CREATED = []


def _recording_creator(ctx):
    CREATED.append(ctx)
    return CountingEnv(ctx)


@pytest.fixture(autouse=True)
def _clear():
    CREATED.clear()
    relayrl.register_env("errors_counting_env", _recording_creator)


def _assert_single_error(info):
    """One clear error: not a chain of 'during handling of the above exception' tracebacks."""
    assert info.value.__cause__ is None and (info.value.__context__ is None or info.value.__suppress_context__)


# -- config mistakes raise before anything is built --------------------------------------------------------------
def test_unknown_builder_key_did_you_mean():
    with pytest.raises(TypeError, match=r"lrr.*Did you mean `lr`"):
        PPOConfig().environment("errors_counting_env").training(lrr=0.1)
    with pytest.raises(TypeError, match=r"num_epoch\b.*Did you mean `num_epochs`"):
        PPOConfig().training(num_epoch=3)


def test_unknown_dict_key_did_you_mean():
    with pytest.raises(ValueError, match=r"minibatch_sise.*Did you mean `minibatch_size`"):
        PPOConfig.from_dict({"env": "errors_counting_env", "minibatch_sise": 32})
    with pytest.raises(ValueError, match="clip_parm"):
        relayrl.PPO(config={"env": "errors_counting_env", "clip_parm": 0.2})
    assert CREATED == []


def test_minibatch_larger_than_batch_raises_before_building():
    config = PPOConfig().environment("errors_counting_env").training(train_batch_size=100, minibatch_size=200)
    with pytest.raises(ValueError) as info:
        config.build_algo()
    assert "minibatch_size (200)" in str(info.value) and "100" in str(info.value)
    assert CREATED == []  # no env was created


def test_bad_values_raise_before_building():
    with pytest.raises(ValueError):
        PPOConfig().environment("errors_counting_env").training(clip_param=-1.0).build_algo()
    with pytest.raises(ValueError):
        PPOConfig().environment("errors_counting_env").env_runners(num_envs_per_env_runner=0).build_algo()
    assert CREATED == []


def test_unknown_model_config_key_did_you_mean():
    config = PPOConfig().environment("errors_counting_env").rl_module(model_config={"fcnet_hidden": [8]})
    with pytest.raises(ValueError, match=r"fcnet_hidden`.*Did you mean `fcnet_hiddens`") as info:
        config.build_algo()
    _assert_single_error(info)


# -- env mistakes ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, suggestion", [("Cartpole-v1", "CartPole-v1"), ("Pendulum-v2", "Pendulum-v1"),
                                             ("errors_counting_envv", "errors_counting_env")])
def test_wrong_env_id_did_you_mean(env, suggestion):
    with pytest.raises(ValueError, match=f"Did you mean `{suggestion}`") as info:
        PPOConfig().environment(env).build_algo()
    assert env in str(info.value)
    _assert_single_error(info)


def test_no_env_raises():
    with pytest.raises(ValueError, match="environment"):
        PPOConfig().build_algo()


@pytest.mark.parametrize("obs_space, act_space, words", [
    (gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "id": gym.spaces.Discrete(3)}), gym.spaces.Discrete(2),
     ["observation space Dict(", "FlattenObservations", "rl_module_spec"]),
    (gym.spaces.Box(-1, 1, (3,)), gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Box(-1, 1, (1,)))),
     ["action space Tuple(", "rl_module_spec"]),
    (gym.spaces.Box(0, 255, (16, 16, 3), np.uint8), gym.spaces.Discrete(2),
     ["images of shape (16, 16, 3)", "defaults exist for [10, 42, 64", "conv_filters=[[out_channels"]),
    (gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(3))), gym.spaces.Discrete(2),
     ["observation space Tuple(", "FlattenObservations"]),
])
def test_unsupported_spaces_give_one_clear_error(obs_space, act_space, words):
    config = PPOConfig().environment(SpacesEnv, env_config={"observation_space": obs_space, "action_space": act_space})
    with pytest.raises(ValueError) as info:
        config.build_algo()
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert "Fix:" in message
    _assert_single_error(info)


def test_flatten_observations_fix_works_for_dict_observations():
    from relayrl.connectors.env_to_module.flatten_observations import (
        FlattenObservations,
    )

    obs_space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "id": gym.spaces.Discrete(3)})
    algo = (PPOConfig().environment(SpacesEnv, env_config={"observation_space": obs_space})
            .env_runners(num_envs_per_env_runner=1,  # 40 steps: four whole 10-step episodes
                         env_to_module_connector=lambda env, spaces, device: FlattenObservations())
            .training(train_batch_size=40, minibatch_size=20, num_epochs=1).build_algo())
    try:
        result = algo.train()
        assert result["env_runners"]["episode_return_mean"] == 10.0
    finally:
        algo.stop()


def test_env_creator_returning_non_env_raises():
    relayrl.register_env("not_an_env", lambda ctx: object())
    with pytest.raises(TypeError, match="gymnasium.Env"):
        PPOConfig().environment("not_an_env").build_algo()


def test_a_fragment_that_fits_rllibs_one_env_names_relayrls_default_of_8_envs():
    # An RLlib dict (1 env per runner there) with fragment 50, 2 runners and a batch of 200 failed through relayrl's
    # 8 envs, and the error asked for another fragment without saying the 8 was not the user's.
    config = PPOConfig().update_from_dict({"env": "CartPole-v1", "num_env_runners": 2, "rollout_fragment_length": 50,
                                          "train_batch_size": 200, "minibatch_size": 50})
    with pytest.raises(ValueError, match=r"num_envs_per_env_runner=8 is relayrl's default here \(RLlib's is 1\), "
                       r"not yours; set num_envs_per_env_runner=2, or set rollout_fragment_length='auto'"):
        config.validate()
    config.env_runners(num_envs_per_env_runner=2).validate()  # the fix it names
    given = PPOConfig().environment("CartPole-v1").env_runners(num_env_runners=2, rollout_fragment_length=50,
                                                               num_envs_per_env_runner=8)
    with pytest.raises(ValueError, match=r"it would sample 800\); set rollout_fragment_length='auto'"):
        given.training(train_batch_size=200, minibatch_size=50).validate()  # (the user's 8: nothing to say)
