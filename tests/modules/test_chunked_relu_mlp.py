"""run_layers_chunked (CQL's critics over many sampled actions): the values and gradients of run_layers, in row
chunks where it applies, and run_layers itself where it does not."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl.algorithms.cql.default_cql_rl_module import DefaultCQLTorchRLModule
from relayrl.core.columns import Columns
from relayrl.modules.chunked_relu_mlp import run_layers_chunked
from relayrl.modules.mlp import run_layers


def _values_and_grads(run, x, nets):
    params = [p for net in nets for p in net.parameters()]
    for p in params:
        p.grad = None
    out = run(x, *nets)
    weights = torch.linspace(-1.0, 2.0, out.numel()).view_as(out)
    (out * weights).sum().backward()
    return out.detach(), [p.grad.clone() for p in params]


@pytest.mark.parametrize("hiddens, outputs", [((16, 16), 1), ((16,), 3), ((), 1)])
def test_chunks_give_run_layers_values_and_gradients(hiddens, outputs):
    torch.manual_seed(0)
    layers, dim = [], 5
    for size in hiddens:
        layers += [nn.Linear(dim, size), nn.ReLU()]
        dim = size
    nets = (nn.Sequential(*layers), nn.Sequential(nn.Linear(dim, outputs)))
    x = torch.randn(1300, 5)  # more rows than a chunk, not a multiple of it
    want, want_grads = _values_and_grads(run_layers, x, nets)
    got, got_grads = _values_and_grads(run_layers_chunked, x, nets)
    assert run_layers_chunked(x, *nets).grad_fn.name() == "_ChunkedReluMLPBackward"
    torch.testing.assert_close(got, want)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["tanh", "input_needs_grad", "few_rows", "no_bias"])
def test_other_layers_and_inputs_go_through_run_layers(case):
    torch.manual_seed(0)
    act = nn.Tanh() if case == "tanh" else nn.ReLU()
    net = nn.Sequential(nn.Linear(4, 8, bias=case != "no_bias"), act, nn.Linear(8, 1))
    x = torch.randn(8 if case == "few_rows" else 1300, 4, requires_grad=case == "input_needs_grad")
    out = run_layers_chunked(x, net)
    assert out.grad_fn.name() != "_ChunkedReluMLPBackward"
    assert torch.equal(out, run_layers(x, net))


def test_cql_module_gradients_equal_the_unchunked_critics():
    """The whole conservative pass (both critics over 3 x num_actions actions per state) on a fixed batch:
    the same outputs and critic gradients as running each critic through `_q_values` (the previous path)."""
    obs_space, action_space = gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Box(-2, 2, (2,), np.float32)
    torch.manual_seed(0)
    module = DefaultCQLTorchRLModule(observation_space=obs_space, action_space=action_space, model_config={
        "fcnet_hiddens": [32, 32], "fcnet_activation": "relu", "twin_q": True, "num_actions": 10})
    module.make_target_networks()
    rng = np.random.default_rng(0)
    batch = {Columns.OBS: torch.as_tensor(rng.normal(size=(64, 3)), dtype=torch.float32),
             Columns.NEXT_OBS: torch.as_tensor(rng.normal(size=(64, 3)), dtype=torch.float32),
             Columns.ACTIONS: torch.as_tensor(rng.uniform(-1, 1, (64, 2)), dtype=torch.float32)}

    def run():
        module.zero_grad(set_to_none=True)
        torch.manual_seed(1)
        out = module.forward_train(batch)
        keys = sorted(k for k in out if k.endswith("_repeat") and k.startswith("q"))
        torch.stack([torch.logsumexp(out[k], dim=1).mean() for k in keys]).sum().backward()
        return ({k: out[k].detach() for k in keys},
                {name: p.grad.clone() for name, p in module.named_parameters() if p.grad is not None})

    got_out, got_grads = run()
    module._sampled_q_values = module._q_values
    want_out, want_grads = run()
    assert set(got_out) == set(want_out) and len(got_out) == 6
    for key in want_out:
        torch.testing.assert_close(got_out[key], want_out[key])
    assert set(got_grads) == set(want_grads) and any(name.startswith("qf_twin") for name in got_grads)
    for name in want_grads:
        torch.testing.assert_close(got_grads[name], want_grads[name], rtol=1e-5, atol=1e-5)
