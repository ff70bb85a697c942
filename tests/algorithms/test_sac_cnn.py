"""SAC's default module on image observations: a CNN per network (actor, each Q, each target) with RLlib's default
filters by image size, uint8 input scaled inside, conv_filters overrides, and uint8 images kept once in replay."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import SACConfig
from relayrl.algorithms.sac.default_sac_rl_module import (
    Q_CURR,
    QF_PREDS,
    QF_TWIN_PREDS,
    DefaultSACTorchRLModule,
)
from relayrl.core.columns import Columns
from relayrl.modules.encoders import DEFAULT_CONV_FILTERS
from relayrl.modules.target_network_api import update_target_networks
from relayrl.testing import DotSideEnv

DISCRETE = gym.spaces.Discrete(3)
BOX = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
NETS = ("pi_encoder", "qf_encoder", "qf_twin_encoder")


def image(size, channels=1):
    return gym.spaces.Box(0, 255, (size, size, channels), np.uint8)


def build(obs_space, action_space, **model_config):
    model_config = {"twin_q": True, "fcnet_hiddens": [32], "fcnet_activation": "relu", "fusionnet_hiddens": [32],
                    "fusionnet_activation": "relu", **model_config}
    module = DefaultSACTorchRLModule(observation_space=obs_space, action_space=action_space,
                                     model_config=model_config)
    module.make_target_networks()
    return module


def conv_shapes(encoder):
    return [(c.out_channels, list(c.kernel_size), c.stride[0]) for c in encoder if isinstance(c, torch.nn.Conv2d)]


def batch(obs_space, action_space, rows=5):
    obs = torch.randint(0, 256, (rows,) + obs_space.shape, dtype=torch.uint8)
    next_obs = torch.randint(0, 256, (rows,) + obs_space.shape, dtype=torch.uint8)
    if isinstance(action_space, gym.spaces.Discrete):
        actions = torch.randint(0, action_space.n, (rows,))
    else:
        actions = torch.rand(rows, *action_space.shape) * 2 - 1
    return {Columns.OBS: obs, Columns.NEXT_OBS: next_obs, Columns.ACTIONS: actions}


@pytest.mark.parametrize("size", [84, 64, 42, 10])
def test_every_network_gets_its_own_cnn_with_rllibs_default_filters(size):
    module = build(image(size), DISCRETE)
    expected = [(f[0], list(f[1]), f[2]) for f in DEFAULT_CONV_FILTERS[size]]
    encoders = [getattr(module, name) for name in NETS] + [module._target_qf_encoder, module._target_qf_twin_encoder]
    for encoder in encoders:
        assert conv_shapes(encoder) == expected
    # Separate weights per network (RLlib's SAC builds separate pi and qf encoders), not shared tensors.
    weights = {id(next(e.parameters())) for e in encoders}
    assert len(weights) == len(encoders)


@pytest.mark.parametrize("action_space", [DISCRETE, BOX], ids=["discrete", "box"])
def test_forward_passes_take_uint8_images(action_space):
    obs_space = image(42)
    module = build(obs_space, action_space)
    data = batch(obs_space, action_space)
    n_out = DISCRETE.n if action_space is DISCRETE else 2 * BOX.shape[0]
    for forward in (module.forward_inference, module.forward_exploration):
        out = forward({Columns.OBS: data[Columns.OBS]})
        assert out[Columns.ACTION_DIST_INPUTS].shape == (5, n_out)
    out = module.forward_train(data)
    assert out[QF_PREDS].shape == out[QF_TWIN_PREDS].shape == (5,)
    assert torch.isfinite(out[QF_PREDS]).all()
    # uint8 is scaled to [0, 1] inside: the same images as float in [0, 1] give the same Q-values.
    scaled = {k: (v.float() / 255.0 if k in (Columns.OBS, Columns.NEXT_OBS) else v) for k, v in data.items()}
    q_scaled = module.compute_q_values(scaled)[QF_PREDS]
    assert torch.allclose(module.compute_q_values(data)[QF_PREDS], q_scaled, atol=1e-5)


def test_box_actions_actor_gradient_reaches_the_policy_and_not_the_critics():
    obs_space = image(10)
    module = build(obs_space, BOX)
    module.forward_train(batch(obs_space, BOX))[Q_CURR].sum().backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in module.pi_encoder.parameters())
    for name in ("qf_encoder", "qf", "qf_twin_encoder", "qf_twin"):
        assert all(p.grad is None for p in getattr(module, name).parameters()), name


@pytest.mark.parametrize("action_space", [DISCRETE, BOX], ids=["discrete", "box"])
def test_target_networks_match_after_a_full_sync(action_space):
    obs_space = image(42)
    module = build(obs_space, action_space)
    data = batch(obs_space, action_space)
    target_q = lambda: module.forward_target(data)[QF_PREDS]  # noqa: E731
    assert torch.allclose(target_q(), module.compute_q_values(data)[QF_PREDS])  # fresh copies
    with torch.no_grad():
        for encoder in (module.qf_encoder, module.qf_twin_encoder):
            for p in encoder.parameters():
                p.add_(0.05 * torch.randn_like(p))
    assert not torch.allclose(target_q(), module.compute_q_values(data)[QF_PREDS])
    update_target_networks(module, tau=1.0)
    for main, target in module.get_target_network_pairs():
        for a, b in zip(main.parameters(), target.parameters()):
            assert torch.equal(a, b)
    assert torch.allclose(target_q(), module.compute_q_values(data)[QF_PREDS])


def test_conv_filters_and_activation_override_the_defaults():
    module = build(image(30, 3), DISCRETE, conv_filters=[[8, 3, 3], [4, [2, 2], 1, "valid"]], conv_activation="elu")
    for name in NETS:
        encoder = getattr(module, name)
        assert conv_shapes(encoder) == [(8, [3, 3], 3), (4, [2, 2], 1)]
        assert any(isinstance(layer, torch.nn.ELU) for layer in encoder)
    out = module.forward_inference({Columns.OBS: torch.zeros(2, 30, 30, 3, dtype=torch.uint8)})
    assert out[Columns.ACTION_DIST_INPUTS].shape == (2, 3)
    assert module.pi[0].in_features == 4 * 9 * 9  # same: 30 / 3 = 10; valid 2x2: 9


def test_unsupported_image_shape_names_the_fix():
    with pytest.raises(ValueError, match=r"DefaultSACTorchRLModule has no default conv_filters for images of shape "
                                         r"\(50, 50, 1\).*conv_filters="):
        build(image(50), DISCRETE)


def test_inference_only_module_has_only_the_policy_cnn_and_loads_learner_weights():
    obs_space = image(42)
    learner = build(obs_space, DISCRETE)
    runner = DefaultSACTorchRLModule(observation_space=obs_space, action_space=DISCRETE, inference_only=True,
                                     model_config={"twin_q": True, "fcnet_hiddens": [32], "fcnet_activation": "relu",
                                                   "fusionnet_hiddens": [32], "fusionnet_activation": "relu"})
    assert not hasattr(runner, "qf_encoder")
    runner.set_state(learner.get_state(inference_only=True))
    obs = {Columns.OBS: torch.randint(0, 256, (3, 42, 42, 1), dtype=torch.uint8)}
    assert torch.equal(runner.forward_inference(obs)[Columns.ACTION_DIST_INPUTS],
                       learner.forward_inference(obs)[Columns.ACTION_DIST_INPUTS])


def test_sac_trains_on_images_kept_uint8_and_stored_once_in_replay():
    config = (SACConfig().environment(DotSideEnv).env_runners(num_envs_per_env_runner=2, rollout_fragment_length=10)
              .training(num_steps_sampled_before_learning_starts=32, train_batch_size_per_learner=16,
                        training_intensity=4, replay_buffer_config={"capacity": 1000})
              .rl_module(model_config={"fcnet_hiddens": [16], "fusionnet_hiddens": [16]})
              .reporting(min_sample_timesteps_per_iteration=64)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        module = algo.learner_group.get_module("default_policy")
        seen = []
        forward_train = module._forward_train
        module._forward_train = lambda b, **kw: (seen.append(b[Columns.OBS].dtype), forward_train(b, **kw))[1]
        result = algo.train()
        assert result["num_env_steps_trained_lifetime"] > 0
        assert seen and set(seen) == {torch.uint8}  # the learner's batches carry uint8, scaled inside the module
        storage = algo.local_replay_buffer._storage
        assert storage.obs_ring.leaves[0].dtype == np.uint8
        # obs and next obs share rows: one row per step plus one per sampled chunk (10 steps per env), not two
        # per transition.
        steps = result["num_env_steps_sampled_lifetime"]
        assert storage.obs_ring.num_added <= 1.1 * steps + 2
    finally:
        algo.stop()


def test_frozen_q_pass_refuses_layers_whose_weights_it_cannot_detach():
    from relayrl.algorithms.sac.default_sac_rl_module import _run_frozen

    with pytest.raises(TypeError, match="cannot detach the weights of Conv2d"):
        _run_frozen(torch.zeros(1, 1, 4, 4), torch.nn.Sequential(torch.nn.Conv2d(1, 1, 2)))


def test_fusionnet_settings_shape_the_mlp_over_features_and_action():
    """RLlib's `fusionnet_hiddens` / `fusionnet_activation`: the layers after concatenating the CNN's features and
    the action (image observations, Box actions)."""
    module = build(image(42), BOX, fusionnet_hiddens=[7, 5], fusionnet_activation="elu")
    linears = [layer for layer in module.qf if isinstance(layer, torch.nn.Linear)]
    assert [layer.out_features for layer in linears] == [7, 5, 1]
    assert any(isinstance(layer, torch.nn.ELU) for layer in module.qf)
