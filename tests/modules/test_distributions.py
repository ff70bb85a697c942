"""Action distributions agree with torch.distributions and sample with the right frequencies."""
import gymnasium as gym
import pytest
import torch
from torch.distributions import Categorical, Normal, kl_divergence

from relayrl.modules.distributions import (
    TorchCategorical,
    TorchDeterministic,
    TorchDiagGaussian,
    TorchSquashedGaussian,
)


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(0)


def test_categorical_logp_entropy_kl_match_torch(gen):
    logits = torch.randn(64, 5, generator=gen) * 3
    other_logits = torch.randn(64, 5, generator=gen) * 3
    actions = torch.randint(0, 5, (64,), generator=gen)
    ours, theirs = TorchCategorical.from_logits(logits), Categorical(logits=logits)
    other, other_theirs = TorchCategorical(other_logits), Categorical(logits=other_logits)
    torch.testing.assert_close(ours.logp(actions), theirs.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), theirs.entropy())
    torch.testing.assert_close(ours.kl(other), kl_divergence(theirs, other_theirs))
    # KL(p || p) == 0 and KL >= 0.
    torch.testing.assert_close(ours.kl(TorchCategorical(logits)), torch.zeros(64), atol=1e-6, rtol=0)
    assert (ours.kl(other) >= -1e-6).all()


def test_categorical_logp_accepts_float_actions_and_batch_dims(gen):
    logits = torch.randn(4, 3, 6, generator=gen)
    actions = torch.randint(0, 6, (4, 3), generator=gen)
    expected = Categorical(logits=logits).log_prob(actions)
    torch.testing.assert_close(TorchCategorical(logits).logp(actions.float()), expected)


def test_categorical_sampling_frequencies_match_probabilities():
    torch.manual_seed(123)
    probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
    dist = TorchCategorical(torch.log(probs).expand(200_000, 4))
    samples = dist.sample()
    assert samples.shape == (200_000,)
    freqs = torch.bincount(samples, minlength=4).float() / samples.numel()
    torch.testing.assert_close(freqs, probs, atol=0.01, rtol=0)


def test_categorical_deterministic_sample_is_argmax(gen):
    logits = torch.randn(32, 7, generator=gen)
    dist = TorchCategorical(logits)
    assert torch.equal(dist.deterministic_sample(), logits.argmax(-1))
    det = dist.to_deterministic()
    assert isinstance(det, TorchDeterministic)
    assert torch.equal(det.sample(), logits.argmax(-1))
    assert torch.equal(det.sample(), det.sample())


def test_categorical_required_input_dim():
    assert TorchCategorical.required_input_dim(gym.spaces.Discrete(7)) == 7


def test_diag_gaussian_logp_entropy_kl_match_torch(gen):
    mean, log_std = torch.randn(64, 3, generator=gen), torch.randn(64, 3, generator=gen) * 0.5
    mean2, log_std2 = torch.randn(64, 3, generator=gen), torch.randn(64, 3, generator=gen) * 0.5
    ours = TorchDiagGaussian.from_logits(torch.cat([mean, log_std], -1))
    other = TorchDiagGaussian(torch.cat([mean2, log_std2], -1))
    theirs, other_theirs = Normal(mean, log_std.exp()), Normal(mean2, log_std2.exp())
    x = torch.randn(64, 3, generator=gen)
    torch.testing.assert_close(ours.logp(x), theirs.log_prob(x).sum(-1))
    torch.testing.assert_close(ours.entropy(), theirs.entropy().sum(-1))
    torch.testing.assert_close(ours.kl(other), kl_divergence(theirs, other_theirs).sum(-1))
    torch.testing.assert_close(ours.kl(ours), torch.zeros(64), atol=1e-6, rtol=0)


def test_diag_gaussian_sampling_moments_and_determinism():
    torch.manual_seed(7)
    mean, std = torch.tensor([1.0, -2.0]), torch.tensor([0.5, 2.0])
    logits = torch.cat([mean, std.log()]).expand(100_000, 4)
    dist = TorchDiagGaussian(logits)
    samples = dist.sample()
    assert samples.shape == (100_000, 2)
    assert not samples.requires_grad
    torch.testing.assert_close(samples.mean(0), mean, atol=0.03, rtol=0)
    torch.testing.assert_close(samples.std(0), std, atol=0.03, rtol=0)
    assert torch.equal(dist.deterministic_sample(), mean.expand(100_000, 2))
    assert torch.equal(dist.to_deterministic().sample(), mean.expand(100_000, 2))


def test_diag_gaussian_rsample_is_differentiable():
    logits = torch.zeros(8, 4, requires_grad=True)
    TorchDiagGaussian(logits).rsample().sum().backward()
    assert logits.grad is not None and logits.grad[:, :2].abs().sum() > 0


def test_diag_gaussian_log_std_is_clipped():
    dist = TorchDiagGaussian(torch.tensor([[0.0, 100.0]]), log_std_clip=20.0)
    assert dist.log_std.item() == 20.0


def test_diag_gaussian_required_input_dim():
    assert TorchDiagGaussian.required_input_dim(gym.spaces.Box(-1, 1, (3,))) == 6


def test_squashed_gaussian_stays_in_bounds_and_logp_matches_change_of_variables(gen):
    mean, log_std = torch.randn(16, 2, generator=gen), torch.randn(16, 2, generator=gen) * 0.3
    dist = TorchSquashedGaussian(torch.cat([mean, log_std], -1))
    samples = dist.sample()
    assert samples.abs().max() < 1.0
    u = torch.atanh(samples.clamp(-1 + 1e-6, 1 - 1e-6))
    expected = Normal(mean, log_std.exp()).log_prob(u).sum(-1) - torch.log(1 - samples.pow(2) + 1e-6).sum(-1)
    torch.testing.assert_close(dist.logp(samples), expected, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dist.deterministic_sample(), torch.tanh(mean))


def test_deterministic_distribution():
    loc = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    dist = TorchDeterministic(loc)
    assert torch.equal(dist.sample(), loc)
    assert torch.equal(dist.logp(loc), torch.zeros(2))
    assert torch.equal(dist.entropy(), torch.zeros(2))
    # Discrete actions (1-D) get one zero log-prob per action.
    assert dist.logp(torch.tensor([1, 0])).shape == (2,)
