"""PPO's default RLModule: sizes, shared/separate value layers, free_log_std, inference-only, space errors."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import Columns
from relayrl.modules.distributions import TorchCategorical, TorchDiagGaussian
from relayrl.modules.rl_module import ValueFunctionAPI
from relayrl.modules.rl_module_spec import RLModuleSpec

OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
DISCRETE = gym.spaces.Discrete(3)
BOX = gym.spaces.Box(-2.0, 2.0, (2,), np.float32)


def build(obs=OBS, act=DISCRETE, inference_only=False, **model_config):
    return RLModuleSpec(module_class=DefaultPPOTorchRLModule, observation_space=obs, action_space=act,
                        inference_only=inference_only, model_config=model_config).build()


def _obs(n=5, dim=4):
    return {Columns.OBS: torch.randn(n, dim)}


def _linear_shapes(seq):
    return [tuple(p.shape) for name, p in seq.named_parameters() if name.endswith("weight")]


def test_discrete_output_sizes_and_dist():
    m = build(fcnet_hiddens=[16, 8])
    assert isinstance(m, ValueFunctionAPI)
    assert _linear_shapes(m.encoder) == [(16, 4), (8, 16)]
    for fwd in (m.forward_inference, m.forward_exploration, m.forward_train):
        assert fwd(_obs())[Columns.ACTION_DIST_INPUTS].shape == (5, 3)
    assert m.get_train_action_dist_cls() is TorchCategorical
    assert m.compute_values(_obs(7)).shape == (7,)


def test_box_output_sizes_mean_and_log_std():
    m = build(act=BOX, fcnet_hiddens=[16])
    out = m.forward_exploration(_obs())[Columns.ACTION_DIST_INPUTS]
    assert out.shape == (5, 4)  # mean and log-std for 2 action dims
    assert m.get_exploration_action_dist_cls() is TorchDiagGaussian
    assert not hasattr(m, "log_std")


def test_free_log_std_is_a_state_independent_parameter():
    m = build(act=BOX, fcnet_hiddens=[16], free_log_std=True)
    assert isinstance(m.log_std, torch.nn.Parameter) and m.log_std.shape == (2,)
    assert m.pi[-1].out_features == 2
    with torch.no_grad():
        m.log_std.copy_(torch.tensor([0.5, -1.0]))
    out = m.forward_inference(_obs(6))[Columns.ACTION_DIST_INPUTS]
    assert out.shape == (6, 4)
    torch.testing.assert_close(out[:, 2:], torch.tensor([[0.5, -1.0]]).expand(6, 2))
    # Gradients reach log_std through the distribution.
    dist = TorchDiagGaussian(m.forward_train(_obs())[Columns.ACTION_DIST_INPUTS])
    dist.logp(torch.zeros(5, 2)).sum().backward()
    assert m.log_std.grad is not None and m.log_std.grad.abs().sum() > 0
    # Discrete actions ignore free_log_std.
    assert not hasattr(build(free_log_std=True), "log_std")


def test_vf_share_layers_true_has_no_separate_value_encoder():
    m = build(fcnet_hiddens=[16], vf_share_layers=True)
    names = {n.split(".")[0] for n, _ in m.named_parameters()}
    assert names == {"encoder", "pi", "vf"}
    # The value head sits on the shared encoder's output, and the train pass's embeddings are reused.
    batch = _obs()
    out = m.forward_train(batch)
    torch.testing.assert_close(m.compute_values(batch, embeddings=out[Columns.EMBEDDINGS]), m.compute_values(batch))
    assert m.vf[-1].in_features == 16


def test_vf_share_layers_false_has_a_separate_value_encoder():
    m = build(fcnet_hiddens=[16, 16], vf_share_layers=False)
    names = {n.split(".")[0] for n, _ in m.named_parameters()}
    assert names == {"encoder", "pi", "vf_encoder", "vf"}
    assert _linear_shapes(m.vf_encoder) == _linear_shapes(m.encoder)
    # The value does not depend on the policy encoder: changing it leaves values unchanged.
    batch = _obs()
    before = m.compute_values(batch)
    with torch.no_grad():
        for p in m.encoder.parameters():
            p.add_(1.0)
    torch.testing.assert_close(m.compute_values(batch, embeddings=m.forward_train(batch)[Columns.EMBEDDINGS]),
                               before)
    # Policy loss gradients do not reach the value encoder.
    m.forward_train(batch)[Columns.ACTION_DIST_INPUTS].sum().backward()
    assert all(p.grad is None for p in m.vf_encoder.parameters())


def test_empty_hiddens_and_activation():
    m = build(fcnet_hiddens=[], fcnet_activation="linear")
    assert m.forward_inference(_obs())[Columns.ACTION_DIST_INPUTS].shape == (5, 3)
    assert m.compute_values(_obs()).shape == (5,)
    relu = build(fcnet_hiddens=[8], fcnet_activation="relu")
    assert isinstance(relu.encoder[1], torch.nn.ReLU)
    with pytest.raises(ValueError, match="activation"):
        build(fcnet_activation="sigmoidish")


def test_head_hiddens():
    m = build(fcnet_hiddens=[8], head_fcnet_hiddens=[6])
    assert _linear_shapes(m.pi) == [(6, 8), (3, 6)]
    assert _linear_shapes(m.vf) == [(6, 8), (1, 6)]


def test_initial_policy_is_near_uniform():
    m = build(fcnet_hiddens=[32])
    logits = m.forward_inference(_obs(50))[Columns.ACTION_DIST_INPUTS]
    probs = torch.softmax(logits, -1)
    assert (probs - 1 / 3).abs().max() < 0.05


def test_inference_only_drops_value_head_and_loads_full_state():
    torch.manual_seed(0)
    for share in (True, False):
        full = build(act=BOX, fcnet_hiddens=[8], vf_share_layers=share, free_log_std=True)
        inf = build(act=BOX, fcnet_hiddens=[8], vf_share_layers=share, free_log_std=True, inference_only=True)
        assert not hasattr(inf, "vf") and not hasattr(inf, "vf_encoder")
        assert not any(k.startswith("vf") for k in inf.get_state())
        with pytest.raises(RuntimeError):
            inf.forward_train(_obs())
        # Full state (incl. value layers) loads into the inference-only module.
        inf.set_state(full.get_state())
        batch = _obs()
        torch.testing.assert_close(inf.forward_inference(batch)[Columns.ACTION_DIST_INPUTS],
                                   full.forward_inference(batch)[Columns.ACTION_DIST_INPUTS])
        # inference_only state of the full module has exactly the inference module's keys.
        assert set(full.get_state(inference_only=True)) == set(inf.get_state())
        inf.set_state(full.get_state(inference_only=True))
        # A full module still needs its value layers.
        with pytest.raises(KeyError):
            full.set_state(inf.get_state())


@pytest.mark.parametrize("space, words", [
    (gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,))}), ["Dict", "FlattenObservations", "rl_module_spec"]),
    (gym.spaces.Box(0, 255, (16, 16, 3), np.uint8), ["(16, 16, 3)", "conv_filters"]),  # no default filters for 16x16
    (gym.spaces.Discrete(5), ["Discrete(5)", "FlattenObservations"]),
])
def test_unsupported_observation_spaces_raise(space, words):
    with pytest.raises(ValueError) as info:
        build(obs=space)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("space, words", [
    (gym.spaces.MultiDiscrete([[2, 3], [2, 2]]), ["MultiDiscrete", "rl_module_spec"]),  # 2-D: not supported
    (gym.spaces.Box(-1, 1, (2, 2)), ["(2, 2)", "rl_module_spec"]),
])
def test_unsupported_action_spaces_raise(space, words):
    with pytest.raises(ValueError) as info:
        build(act=space)
    for word in words:
        assert word in str(info.value)


def test_unsupported_model_options_raise():
    # use_lstm=True is supported (tests/algorithms/test_ppo_lstm.py); the old stack's LSTM inputs are not.
    with pytest.raises(ValueError, match="lstm_use_prev_reward"):
        build(use_lstm=True, lstm_use_prev_reward=True)


def test_log_std_clip_param_bounds_log_std():
    m = build(act=BOX, fcnet_hiddens=[4], log_std_clip_param=0.5)
    with torch.no_grad():
        m.pi[-1].bias.copy_(torch.tensor([0.0, 0.0, 3.0, -3.0]))
    log_std = m.forward_inference(_obs())[Columns.ACTION_DIST_INPUTS][:, 2:]
    assert log_std.max() <= 0.5 and log_std.min() >= -0.5
    free = build(act=BOX, fcnet_hiddens=[4], free_log_std=True, log_std_clip_param=1.0)
    with torch.no_grad():
        free.log_std.copy_(torch.tensor([5.0, 0.25]))
    out = free.forward_inference(_obs())[Columns.ACTION_DIST_INPUTS]
    torch.testing.assert_close(out[:, 2:], torch.tensor([[1.0, 0.25]]).expand(5, 2))


def test_initializers_from_model_config():
    m = build(fcnet_hiddens=[6], fcnet_kernel_initializer="zeros_", fcnet_bias_initializer="ones_",
              head_fcnet_hiddens=[5], head_fcnet_kernel_initializer=torch.nn.init.ones_,
              head_fcnet_bias_initializer="zeros")
    assert torch.all(m.encoder[0].weight == 0) and torch.all(m.encoder[0].bias == 1)
    for head in (m.pi, m.vf):
        for layer in (head[0], head[-1]):
            assert torch.all(layer.weight == 1) and torch.all(layer.bias == 0)
    with pytest.raises(ValueError, match="initializer"):
        build(fcnet_kernel_initializer="no_such_init")
