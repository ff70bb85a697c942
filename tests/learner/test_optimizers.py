"""relayrl's Adam equals torch.optim.Adam bit for bit, and avoids importing torch._dynamo."""
import copy
import subprocess
import sys

import torch

from relayrl.learner.optimizers import Adam


def _train(optimizer_cls, steps=20):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    optimizer = optimizer_cls(net.parameters(), lr=3e-3, weight_decay=1e-4)
    for i in range(steps):
        x = torch.randn(32, 4, generator=torch.Generator().manual_seed(i))
        optimizer.zero_grad()
        net(x).pow(2).mean().backward()
        optimizer.step()
    return net, optimizer


def test_same_parameters_and_state_as_torch_adam():
    ours, our_opt = _train(Adam)
    theirs, their_opt = _train(torch.optim.Adam)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert torch.equal(a, b)
    ours_state, theirs_state = our_opt.state_dict(), their_opt.state_dict()
    assert ours_state["param_groups"] == theirs_state["param_groups"]
    for key in theirs_state["state"]:
        for name, value in theirs_state["state"][key].items():
            assert torch.equal(ours_state["state"][key][name], value)


def test_fused_adam_equals_torchs_fused_adam_bit_for_bit():
    """relayrl launches the fused kernel itself after the first step; the numbers must not change."""
    ours, our_opt = _train(lambda params, **kw: Adam(params, fused=True, **kw))
    theirs, their_opt = _train(lambda params, **kw: torch.optim.Adam(params, fused=True, **kw))
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert torch.equal(a, b)
    for key, state in their_opt.state_dict()["state"].items():
        for name, value in state.items():
            assert torch.equal(our_opt.state_dict()["state"][key][name], value), name
    assert our_opt.state_dict()["state"][0]["step"].item() == 20


def test_state_dict_round_trip_continues_identically():
    net, optimizer = _train(Adam, steps=5)
    state = optimizer.state_dict()
    fresh = Adam(net.parameters(), lr=1.0)
    fresh.load_state_dict(state)
    assert fresh.param_groups[0]["lr"] == 3e-3 and fresh.state_dict()["state"].keys() == state["state"].keys()


def test_ppo_training_does_not_import_the_torch_compiler():
    code = ("import sys, relayrl; algo = relayrl.PPOConfig().environment('CartPole-v1')"
            ".training(train_batch_size=64, minibatch_size=32, num_epochs=1).build_algo(); algo.train(); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"


def test_make_adam_prefers_the_fused_kernel_and_still_trains():
    from relayrl.learner.optimizers import make_adam

    net = torch.nn.Linear(4, 1)
    optimizer = make_adam(net.parameters(), lr=0.05)
    assert optimizer.param_groups[0]["fused"] is True
    x = torch.randn(64, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])  # learnable exactly
    losses = []
    for _ in range(50):
        optimizer.zero_grad()
        loss = (net(x) - y).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]


def test_cached_fused_step_after_load_state_dict_matches_torch():
    """The fused step keeps its tensor lists between steps; loading a state replaces them (no stale moments)."""
    ours, our_opt = _train(lambda params, **kw: Adam(params, fused=True, **kw), steps=5)
    theirs, their_opt = _train(lambda params, **kw: torch.optim.Adam(params, fused=True, **kw), steps=5)
    saved = copy.deepcopy(their_opt.state_dict())
    for _ in range(3):  # our cache now holds the current moment tensors
        for net, opt in ((ours, our_opt), (theirs, their_opt)):
            opt.zero_grad()
            net(torch.ones(8, 4)).pow(2).mean().backward()
            opt.step()
    our_opt.load_state_dict(copy.deepcopy(saved))  # load_state_dict keeps the given tensors: one copy each
    their_opt.load_state_dict(copy.deepcopy(saved))
    with torch.no_grad():
        for a, b in zip(ours.parameters(), theirs.parameters()):
            a.copy_(b)
    for net, opt in ((ours, our_opt), (theirs, their_opt)):
        opt.zero_grad()
        net(torch.ones(8, 4)).pow(2).mean().backward()
        opt.step_unhooked() if opt is our_opt else opt.step()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert torch.equal(a, b)


def test_step_unhooked_still_runs_registered_step_hooks():
    net, optimizer = _train(lambda params, **kw: Adam(params, fused=True, **kw), steps=2)
    calls = []
    optimizer.register_step_post_hook(lambda opt, args, kwargs: calls.append(1))
    net(torch.ones(2, 4)).sum().backward()
    optimizer.step_unhooked()
    assert calls == [1]
