"""The default CNN encoder: RLlib's filter format and default filters, "same"/"valid" padding, uint8 images scaled
inside the module, and the default PPO / DQN / IMPALA modules on image observations."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import DefaultModelConfig, DQNConfig, IMPALAConfig, PPOConfig
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.modules.encoders import cnn, default_conv_filters, make_encoder
from relayrl.testing import DotSideEnv


@pytest.mark.parametrize("size, features", [(84, 256), (64, 128 * 4 * 4), (42, 256), (10, 32 * 3 * 3)])
def test_default_filters_by_image_size(size, features):
    layers, out = cnn((size, size, 3), default_conv_filters((size, size, 3), "M"), "relu")
    assert out == features
    images = torch.randint(0, 256, (2, size, size, 3), dtype=torch.uint8)
    assert layers(images).shape == (2, features)


def test_same_padding_gives_ceil_of_input_over_stride_and_valid_shrinks():
    layers, out = cnn((11, 7, 1), [[4, 3, 2], [2, [3, 3], 1, "valid"]], "relu")
    assert out == 2 * (6 - 2) * (4 - 2)  # same: ceil(11/2)=6, ceil(7/2)=4; valid 3x3: -2 each
    with pytest.raises(ValueError, match="would output nothing"):
        cnn((4, 4, 1), [[4, 5, 1, "valid"]], "relu")
    with pytest.raises(ValueError, match="padding must be 'same' or 'valid'"):
        cnn((8, 8, 1), [[4, 3, 1, "full"]], "relu")


def _reference_forward(layers, filters, images):
    """The encoder computed the plain way, with its weights: a contiguous NCHW float copy scaled by 1/255, each
    "same" layer's TensorFlow padding as a separate zero pad (odd pixel bottom/right), torch's conv2d."""
    x = images.permute(0, 3, 1, 2).contiguous().float() / 255.0
    convs = [m for m in layers if isinstance(m, torch.nn.Conv2d)]
    for conv, spec in zip(convs, filters):
        if (spec[3] if len(spec) > 3 else "same") == "same":
            (kh, kw), (sh, sw), (h, w) = conv.kernel_size, conv.stride, x.shape[-2:]
            pad_h = max((-(-h // sh) - 1) * sh + kh - h, 0)
            pad_w = max((-(-w // sw) - 1) * sw + kw - w, 0)
            x = torch.nn.functional.pad(x, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2))
        x = torch.relu(torch.nn.functional.conv2d(x, conv.weight, conv.bias, conv.stride))
    return x.flatten(1)


@pytest.mark.parametrize("shape, filters", [
    ((84, 84, 4), None), ((64, 64, 3), None), ((42, 42, 3), None), ((96, 96, 3), None), ((10, 10, 1), None),
    ((11, 7, 2), [[4, 3, 2], [3, [2, 4], [1, 2]], [5, [6, 2], 1, "valid"]]),  # odd pads, a full-map last layer
])
def test_fast_layers_give_the_plain_convolutions_outputs_and_gradients(shape, filters):
    filters = filters or default_conv_filters(shape, "M")
    torch.manual_seed(0)
    layers, _ = cnn(shape, filters, "relu")
    images = torch.randint(0, 256, (5, *shape), dtype=torch.uint8)
    fast, plain = layers(images), _reference_forward(layers, filters, images)
    assert fast.shape == plain.shape
    torch.testing.assert_close(fast, plain, rtol=1e-4, atol=1e-5)
    fast_grads = torch.autograd.grad(fast.square().sum(), list(layers.parameters()))
    plain_grads = torch.autograd.grad(plain.square().sum(), list(layers.parameters()))
    for a, b in zip(fast_grads, plain_grads):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_parameter_names_and_shapes_are_those_of_the_plain_layers():
    """Checkpoints of earlier versions (a ZeroPad2d wherever a pad was, nn.Conv2d everywhere) still load."""
    layers, _ = cnn((84, 84, 4), default_conv_filters((84, 84, 4), "M"), "relu")
    assert {k: tuple(v.shape) for k, v in layers.state_dict().items()} == {
        "2.weight": (16, 4, 8, 8), "2.bias": (16,), "5.weight": (32, 16, 4, 4), "5.bias": (32,),
        "7.weight": (256, 32, 11, 11), "7.bias": (256,)}


def test_float_images_are_not_changed_in_place():
    layers, _ = cnn((10, 10, 1), [[1, 1, 1]], "linear")
    images = torch.full((1, 10, 10, 1), 255.0)
    layers(images)
    assert torch.equal(images, torch.full((1, 10, 10, 1), 255.0))


def test_uint8_images_are_scaled_inside_the_module():
    layers, _ = cnn((10, 10, 1), [[1, 1, 1]], "linear")
    conv = layers[1]  # a 1x1 kernel needs no padding layer
    with torch.no_grad():
        conv.weight.fill_(1.0)
        conv.bias.zero_()
    image = np.full((1, 10, 10, 1), 255, np.uint8)
    assert torch.allclose(layers(torch.from_numpy(image)), torch.ones(1, 100))  # 255 -> 1.0
    assert torch.allclose(layers(torch.from_numpy(image.astype(np.float32))), torch.full((1, 100), 255.0))


def test_unknown_image_size_names_the_fix():
    with pytest.raises(ValueError, match=r"no default conv_filters for images of shape \(210, 160, 3\).*Atari"):
        make_encoder(gym.spaces.Box(0, 255, (210, 160, 3), np.uint8), DefaultModelConfig(), "M")
    encoder, out = make_encoder(gym.spaces.Box(0, 255, (30, 30, 1), np.uint8),
                                DefaultModelConfig(conv_filters=[[8, 3, 3]]), "M")
    assert out == 8 * 10 * 10


@pytest.mark.parametrize("config_cls", [PPOConfig, DQNConfig, IMPALAConfig])
def test_default_modules_train_on_uint8_images(config_cls):
    config = (config_cls().environment(DotSideEnv).env_runners(num_envs_per_env_runner=2)
              .debugging(seed=0, logger_config={"type": "none"}))
    if config_cls is PPOConfig:
        config.training(train_batch_size=64, minibatch_size=32, num_epochs=1)
    elif config_cls is DQNConfig:
        config.training(num_steps_sampled_before_learning_starts=32, replay_buffer_config={"capacity": 1000})
        config.reporting(min_sample_timesteps_per_iteration=64)
    else:
        config.env_runners(rollout_fragment_length=10).training(train_batch_size=40).reporting(
            min_sample_timesteps_per_iteration=40)
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["num_env_steps_trained_lifetime"] > 0
        module = algo.learner_group.get_module("default_policy")
        assert any(isinstance(m, torch.nn.Conv2d) for m in module.modules())
        if config_cls is DQNConfig:  # images stay uint8 in the replay buffer, stored once (obs and next obs share rows)
            storage = algo.local_replay_buffer._storage
            assert storage.obs_ring.leaves[0].dtype == np.uint8
    finally:
        algo.stop()


def test_numpy_inference_falls_back_to_torch_for_a_cnn():
    from relayrl.env.sampling import plan_actions
    from relayrl.env.sampling.torch_actions import TorchModuleActions

    algo = PPOConfig().environment(DotSideEnv).env_runners(num_envs_per_env_runner=2).training(
        train_batch_size=64, minibatch_size=32, num_epochs=1).debugging(logger_config={"type": "none"}).build_algo()
    try:
        assert isinstance(algo.env_runner.module, DefaultPPOTorchRLModule)
        assert algo.env_runner.module.numpy_forward() is None  # the module declares no numpy forward for a CNN
        algo.env_runner.sample(num_timesteps=2)  # (resets the envs: the plan reads the runner's batch)
        assert type(plan_actions(algo.env_runner, explore=False)) is TorchModuleActions
        algo.train()
    finally:
        algo.stop()


def test_image_modules_share_the_cnn_between_policy_and_value_unless_told_otherwise():
    from relayrl import PPOConfig
    from relayrl.testing import DotSideEnv

    def module(**model_config):
        config = PPOConfig().environment(DotSideEnv)
        if model_config:
            config.rl_module(model_config=model_config)
        env = DotSideEnv()
        spec = config.get_rl_module_spec(spaces={"__env_single__": (env.observation_space, env.action_space)})
        return spec.build()

    assert module().vf_share_layers and not hasattr(module(), "vf_encoder")
    assert not module(vf_share_layers=False).vf_share_layers
    # Vector observations keep PPO's own default (separate value network).
    assert PPOConfig().environment("CartPole-v1").get_rl_module_spec(
        spaces={"__env_single__": (gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2))}).model_config[
        "vf_share_layers"] is False
