"""run_layers' in-place activations on a Linear's fresh output: the same values and gradients as the modules."""
import pytest
import torch
from torch import nn

from relayrl.modules.mlp import run_layers


@pytest.mark.parametrize("act", [nn.Tanh, nn.ReLU])
def test_in_place_activations_match_the_modules_values_and_gradients(act):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), act(), nn.Linear(8, 8), act(), act(), nn.Linear(8, 2))
    obs = torch.randn(5, 3, requires_grad=True)
    obs_before = obs.detach().clone()
    expected = net(obs)
    (expected ** 2).sum().backward()
    expected_grads = [p.grad.clone() for p in net.parameters()] + [obs.grad.clone()]
    net.zero_grad(), obs.grad.zero_()
    out = run_layers(obs, net)
    (out ** 2).sum().backward()
    assert torch.equal(out, expected)
    for got, want in zip([p.grad for p in net.parameters()] + [obs.grad], expected_grads):
        assert torch.equal(got, want)
    assert torch.equal(obs.detach(), obs_before)  # the caller's input is never overwritten


def test_an_activation_first_leaves_the_input_alone():
    x = torch.tensor([[-1.0, 2.0]])
    out = run_layers(x, nn.Sequential(nn.ReLU()))
    assert torch.equal(x, torch.tensor([[-1.0, 2.0]])) and torch.equal(out, torch.tensor([[0.0, 2.0]]))


def test_frozen_run_sends_gradients_to_the_input_only():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    x = torch.randn(4, 3, requires_grad=True)
    out = run_layers(x, net, frozen=True)
    torch.testing.assert_close(out, net(x))
    out.sum().backward()
    assert all(p.grad is None for p in net.parameters()) and x.grad is not None and x.grad.abs().sum() > 0
    with pytest.raises(TypeError, match="cannot detach the weights of LayerNorm"):
        run_layers(x, nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3)), frozen=True)
