"""GAE over the flat 'episodes + one artificial step' layout equals a straightforward per-episode reference."""
import numpy as np
import pytest

from relayrl.ops.gae import compute_gae, discount_cumsum


def reference_gae(rewards, values, bootstrap, terminated, gamma, lambda_):
    """Textbook GAE for one episode (chunk): values has T entries, bootstrap is V(s_T)."""
    T = len(rewards)
    next_values = np.append(values[1:], 0.0 if terminated else bootstrap)
    deltas = rewards + gamma * next_values - values
    advantages = np.zeros(T)
    for t in range(T):
        advantages[t] = sum((gamma * lambda_) ** k * deltas[t + k] for k in range(T - t))
    return advantages, advantages + values


def make_layout(rng, episodes):
    """Flat arrays for a list of (length, terminated) episodes, plus per-episode data."""
    values, rewards, terms, mask, per_episode = [], [], [], [], []
    for length, terminated in episodes:
        r, v, boot = rng.normal(size=length), rng.normal(size=length), rng.normal()
        per_episode.append((r, v, boot, terminated))
        values += list(v) + [boot]
        rewards += list(r) + [0.0]
        t = [False] * (length + 1)
        t[length - 1] = terminated
        t[length] = True
        terms += t
        mask += [True] * length + [False]
    return (np.array(values), np.array(rewards), np.array(terms), np.array(mask)), per_episode


@pytest.mark.parametrize("gamma, lambda_", [(0.99, 1.0), (0.95, 0.5), (0.9, 0.0), (1.0, 0.95)])
def test_gae_matches_reference_on_random_episodes(gamma, lambda_):
    rng = np.random.default_rng(0)
    episodes = [(int(rng.integers(1, 12)), bool(rng.integers(0, 2))) for _ in range(20)]
    episodes += [(1, True), (1, False)]
    (values, rewards, terms, mask), per_episode = make_layout(rng, episodes)
    advantages, targets = compute_gae(values, rewards, terms, mask, gamma=gamma, lambda_=lambda_)
    assert advantages.dtype == np.float32 and advantages.shape == values.shape
    start = 0
    for (r, v, boot, terminated) in per_episode:
        ref_adv, ref_targets = reference_gae(r, v, boot, terminated, gamma, lambda_)
        n = len(r)
        np.testing.assert_allclose(advantages[start:start + n], ref_adv, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(targets[start:start + n], ref_targets, rtol=1e-5, atol=1e-5)
        assert advantages[start + n] == 0.0 and targets[start + n] == 0.0  # the artificial step
        start += n + 1


def test_terminated_vs_truncated_bootstrap():
    # One step, reward 1, V(s0) = 0.5, V(s1) = 10.
    common = dict(gamma=0.9, lambda_=1.0)
    values, rewards, mask = np.array([0.5, 10.0]), np.array([1.0, 0.0]), np.array([True, False])
    adv_term, tgt_term = compute_gae(values, rewards, np.array([True, True]), mask, **common)
    adv_trunc, tgt_trunc = compute_gae(values, rewards, np.array([False, True]), mask, **common)
    assert tgt_term[0] == pytest.approx(1.0)  # no bootstrap after termination
    assert adv_term[0] == pytest.approx(0.5)
    assert tgt_trunc[0] == pytest.approx(1.0 + 0.9 * 10.0)  # bootstrapped from V(s1)
    assert adv_trunc[0] == pytest.approx(1.0 + 9.0 - 0.5)


def test_lambda_one_gives_discounted_returns_as_targets():
    rng = np.random.default_rng(1)
    (values, rewards, terms, mask), per_episode = make_layout(rng, [(6, True), (4, True)])
    _, targets = compute_gae(values, rewards, terms, mask, gamma=0.97, lambda_=1.0)
    np.testing.assert_allclose(targets[:6], discount_cumsum(per_episode[0][0], 0.97), rtol=1e-5)
    np.testing.assert_allclose(targets[7:11], discount_cumsum(per_episode[1][0], 0.97), rtol=1e-5)


def test_discount_cumsum():
    np.testing.assert_allclose(discount_cumsum([1.0, 2.0, 3.0], 0.5), [1 + 0.5 * 2 + 0.25 * 3, 2 + 1.5, 3.0])
    assert discount_cumsum([], 0.9).shape == (0,)
