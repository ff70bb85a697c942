"""relayrl.ops.n_step.n_step_lookahead against a per-row Python loop."""
import numpy as np
import pytest

from relayrl.ops.n_step import n_step_lookahead


def reference(start, n, next_index, rewards, gamma):
    last, returns, steps = [], [], []
    for i, slot in enumerate(start):
        total, k = float(rewards[slot]), 1
        limit = n if np.isscalar(n) else n[i]
        while k < limit and next_index[slot] >= 0:
            slot = next_index[slot]
            total += gamma ** k * float(rewards[slot])
            k += 1
        last.append(slot), returns.append(total), steps.append(k)
    return np.array(last), np.array(returns), np.array(steps)


@pytest.mark.parametrize("n", [1, 2, 5, "per_row"])
def test_matches_reference_on_random_links(n):
    rng = np.random.default_rng(0)
    size = 200
    # random chains: a permutation split into episodes at random points
    order = rng.permutation(size)
    next_index = np.full(size, -1)
    ends = rng.random(size) < 0.2
    for a, b, end in zip(order[:-1], order[1:], ends):
        if not end:
            next_index[a] = b
    rewards = rng.normal(size=size).astype(np.float32)
    start = rng.integers(0, size, 300)
    n = rng.integers(1, 7, 300) if n == "per_row" else n
    last, returns, steps = n_step_lookahead(start, n, next_index, rewards, 0.9)
    ref_last, ref_returns, ref_steps = reference(start, n, next_index, rewards, 0.9)
    np.testing.assert_array_equal(last, ref_last)
    np.testing.assert_array_equal(steps, ref_steps)
    np.testing.assert_allclose(returns, ref_returns, rtol=1e-5, atol=1e-6)
    assert returns.dtype == np.float32 and steps.dtype == np.int64


def test_empty_batch():
    last, returns, steps = n_step_lookahead(np.zeros(0, np.int64), 3, np.array([-1]), np.zeros(1, np.float32), 0.9)
    assert len(last) == len(returns) == len(steps) == 0
