"""PrioritizedEpisodeReplayBuffer and its segment trees: sampling frequencies, weights, priorities."""
import numpy as np
import pytest
from replay_chunks import expected_row, make_chunk

from relayrl.core.columns import Columns
from relayrl.replay import PrioritizedEpisodeReplayBuffer
from relayrl.replay.segment_tree import MinTree, SumTree


def step_of(batch):
    return batch[Columns.OBS][:, 1].astype(int)


# -- segment trees ---------------------------------------------------------------------------------

@pytest.mark.parametrize("num_leaves", [1, 5, 16, 17, 300, 5000])
def test_sum_tree_prefix_search_matches_cumsum(num_leaves):
    rng = np.random.default_rng(num_leaves)
    leaves = rng.random(num_leaves)
    leaves[rng.random(num_leaves) < 0.3] = 0.0  # zero leaves are never found
    leaves[0] = max(leaves[0], 0.1)
    tree = SumTree(num_leaves)
    tree.set(np.arange(num_leaves), leaves)
    assert tree.root == pytest.approx(leaves.sum())
    targets = np.concatenate([rng.random(500) * leaves.sum(), [0.0, np.cumsum(leaves)[0]]])
    targets = targets[targets < leaves.sum()]
    found = tree.find_prefix_sum(targets)
    np.testing.assert_array_equal(found, np.searchsorted(np.cumsum(leaves), targets, side="right"))
    assert np.all(leaves[found] > 0)


def test_tree_updates_batch_repeats_and_ranges():
    rng = np.random.default_rng(0)
    trees = {"set": (SumTree(37), MinTree(37)), "range": (SumTree(37), MinTree(37))}
    leaves = rng.random(37)
    for s, m in trees.values():
        s.set(np.arange(37), leaves), m.set(np.arange(37), leaves)
    trees["set"][0].set(np.arange(30, 37), 5.0), trees["set"][1].set(np.arange(30, 37), 5.0)
    trees["range"][0].set_range(30, 37, 5.0), trees["range"][1].set_range(30, 37, 5.0)
    leaves[30:] = 5.0
    idx = np.array([3, 3, 8, 20])
    for s, m in trees.values():
        s.set(idx, [0.5, 0.25, 0.01, 2.0]), m.set(idx, [0.5, 0.25, 0.01, 2.0])
    leaves[idx] = [0.5, 0.25, 0.01, 2.0]  # last value wins for index 3
    for s, m in trees.values():
        for level, reference in zip(s.levels, trees["set"][0].levels):
            np.testing.assert_allclose(level, reference)
        np.testing.assert_array_equal(s.leaves(), leaves)
        assert s.root == pytest.approx(leaves.sum()) and m.root == leaves.min()
        # every inner node is the sum (min) of its children
        for tree, op in ((s, np.sum), (m, np.min)):
            for level, children in zip(tree.levels[:-1], tree.children):
                np.testing.assert_allclose(level, op(children, axis=1))


# -- buffer ------------------------------------------------------------------------------------------

def filled_buffer(alpha, beta=0.4, seed=0, length=10):
    buffer = PrioritizedEpisodeReplayBuffer(100, alpha=alpha, beta=beta, seed=seed)
    buffer.add([make_chunk(0, 0, length, terminated=True)])
    return buffer


def set_priorities(buffer, priorities):
    """Give step t priority priorities[t] (sample everything once to learn the indices)."""
    batch = buffer.sample(2000, beta=0.0)
    index_of = dict(zip(step_of(batch).tolist(), batch["indices"].tolist()))
    buffer.update_priorities(np.asarray(priorities) - 1e-6, [index_of[t] for t in range(len(priorities))])
    return index_of


def test_new_transitions_sample_uniformly_at_first():
    buffer = filled_buffer(alpha=0.6)
    counts = np.bincount(step_of(buffer.sample(20000)), minlength=10)
    assert counts.min() > 1800 and counts.max() < 2200
    assert np.all(buffer.sample(50)["weights"] == 1.0)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_sampling_frequencies_follow_p_alpha(alpha):
    # Over seeds 0-39 the statistic averages 9.8 (9 expected); seed 1 is a typical one.
    buffer = filled_buffer(alpha, seed=1)
    priorities = np.arange(1, 11, dtype=np.float64)
    set_priorities(buffer, priorities)
    num = 40000
    counts = np.bincount(step_of(buffer.sample(num)), minlength=10)
    expected = num * priorities ** alpha / np.sum(priorities ** alpha)
    chi_square = np.sum((counts - expected) ** 2 / expected)
    assert chi_square < 27.9  # 99.9% quantile of chi-square with 9 degrees of freedom


def test_importance_weights_formula():
    buffer = filled_buffer(alpha=0.7, beta=0.5)
    priorities = np.linspace(0.5, 5.0, 10)
    set_priorities(buffer, priorities)
    batch = buffer.sample(200)
    prob = priorities ** 0.7 / np.sum(priorities ** 0.7)
    n = len(priorities)
    max_weight = (n * prob.min()) ** -0.5  # max over all stored transitions, as RLlib
    expected = (n * prob[step_of(batch)]) ** -0.5 / max_weight
    np.testing.assert_allclose(batch["weights"], expected, rtol=1e-5)
    assert batch["weights"].dtype == np.float32 and batch["weights"].max() <= 1.0
    # beta at sample time overrides the constructor's; beta=0 gives ones
    np.testing.assert_allclose(buffer.sample(100, beta=1.0)["weights"].min(), prob.min() / prob.max(), rtol=1e-5)
    assert np.all(buffer.sample(100, beta=0.0)["weights"] == 1.0)


def test_update_priorities_effect_and_max_priority_for_new_steps():
    buffer = filled_buffer(alpha=1.0)
    index_of = set_priorities(buffer, [0.01] * 9 + [100.0])
    assert np.mean(step_of(buffer.sample(1000)) == 9) > 0.99
    np.testing.assert_allclose(buffer.get_priorities([index_of[9], index_of[0]]), [100.0, 0.01], rtol=1e-6)
    # td errors: |td| + 1e-6
    buffer.update_priorities(np.array([-3.0]), [index_of[9]])
    np.testing.assert_allclose(buffer.get_priorities([index_of[9]]), [3.0 + 1e-6])
    buffer.add([make_chunk(1, 0, 1, terminated=True)])  # gets the max priority seen so far (100)
    batch = buffer.sample(2000)
    assert np.mean(batch[Columns.OBS][:, 0] == 1) > 0.9


def test_stale_indices_are_skipped():
    buffer = PrioritizedEpisodeReplayBuffer(4, alpha=1.0, seed=1)
    buffer.add([make_chunk(0, 0, 4, terminated=True)])
    old = buffer.sample(50)["indices"]
    buffer.add([make_chunk(1, 0, 4, terminated=True)])  # overwrites all four slots
    before = buffer._sum_tree.leaves().copy()
    buffer.update_priorities(np.full(len(old), 50.0), old)
    np.testing.assert_array_equal(buffer._sum_tree.leaves(), before)
    assert buffer._sum_tree.root == before.sum()


def test_n_step_columns_match_uniform_buffer_semantics():
    buffer = PrioritizedEpisodeReplayBuffer(100, seed=2)
    buffer.add([make_chunk(0, 0, 3), make_chunk(1, 0, 2, truncated=True)])
    buffer.add([make_chunk(0, 3, 2, lookback=1, terminated=True)])
    batch = buffer.sample(200, n_step=3, gamma=0.9)
    for i in range(200):
        e, t = batch[Columns.OBS][i].astype(int)
        ret, t_next, steps, terminated, truncated = expected_row(
            e, t, 3, 0.9, *{0: (5, "terminated"), 1: (2, "truncated")}[e])
        assert batch[Columns.REWARDS][i] == pytest.approx(ret) and batch["n_step"][i] == steps
        assert batch[Columns.NEXT_OBS][i, 1] == t_next
        assert (batch[Columns.TERMINATEDS][i], batch[Columns.TRUNCATEDS][i]) == (terminated, truncated)


def test_bad_priorities_and_arguments():
    buffer = filled_buffer(alpha=0.6)
    idx = buffer.sample(2)["indices"]
    with pytest.raises(ValueError, match="NaN"):
        buffer.update_priorities([np.nan, 1.0], idx)
    with pytest.raises(ValueError, match="2 indices"):
        buffer.update_priorities([1.0], idx)
    with pytest.raises(ValueError, match="alpha"):
        PrioritizedEpisodeReplayBuffer(10, alpha=-1)
    with pytest.raises(ValueError, match="beta"):
        buffer.sample(2, beta=-0.5)
    with pytest.raises(TypeError, match="Did you mean `alpha`"):
        PrioritizedEpisodeReplayBuffer(10, alpah=0.5)


def test_prefix_sum_search_finds_the_same_leaves_with_torch_or_numpy_cumsum(monkeypatch):
    from relayrl.replay import segment_tree

    rng = np.random.default_rng(7)
    tree = SumTree(5000)
    tree.set(np.arange(4000), rng.uniform(0.0, 1.0, 4000) ** 3 * 10.0 ** rng.integers(-6, 6, 4000))
    prefix = np.cumsum(tree.leaves())
    # random targets and the exact leaf boundaries (where a different rounding would pick another leaf)
    targets = np.concatenate([rng.random(3000) * tree.root, prefix[rng.integers(0, 3999, 1000)]])
    targets = np.minimum(targets, np.nextafter(tree.root, 0.0))
    found = {}
    for name, min_rows in (("numpy", 10 ** 9), ("torch", 1)):
        monkeypatch.setattr(segment_tree, "TORCH_CUMSUM_MIN_ROWS", min_rows)
        found[name] = tree.find_prefix_sum(targets)
    np.testing.assert_array_equal(found["torch"], found["numpy"])


@pytest.mark.parametrize("num_stored", [1, 16, 17, 256, 300, 5000])
def test_prefix_search_skips_the_empty_top_levels_of_a_partly_filled_tree(num_stored, monkeypatch):
    rng = np.random.default_rng(num_stored)
    tree = SumTree(100_000)  # 5 levels; a few thousand stored leaves fill only the first subtrees
    leaves = rng.random(num_stored) + 0.01
    tree.set(np.arange(num_stored), leaves)
    expected_skip = sum(1 for level in range(1, tree.depth) if num_stored <= 16 ** (tree.depth - level))
    assert tree._empty_top_levels() == expected_skip
    uniform = rng.random(300) * tree.root
    np.testing.assert_array_equal(tree.find_prefix_sum(uniform), np.searchsorted(np.cumsum(leaves), uniform, "right"))
    # the same leaves as the full descent, also at the leaf boundaries and at the rounding edge u >= total
    targets = np.concatenate([uniform, np.cumsum(leaves)[:-1], [tree.root, np.nextafter(tree.root, 0.0)]])
    found = tree.find_prefix_sum(targets)
    monkeypatch.setattr(SumTree, "_empty_top_levels", lambda self: 0)
    np.testing.assert_array_equal(tree.find_prefix_sum(targets), found)


def _set_by_gathers(tree, leaf_indices, values):
    """The plain batch update (every level by gathers) that SegmentTree.set's slice shortcut must equal."""
    nodes = np.asarray(leaf_indices, np.int64)
    tree.levels[-1][nodes] = values
    for level in range(tree.depth - 1, -1, -1):
        nodes = nodes >> 4
        tree.levels[level][nodes] = tree.op.reduce(tree.children[level][nodes], axis=1)


@pytest.mark.parametrize("tree_cls", [SumTree, MinTree])
@pytest.mark.parametrize("num_stored,batch", [(40, 8), (5000, 64), (5000, 256), (70_000, 256), (100_000, 1)])
def test_batch_set_gives_bit_identical_inner_nodes_to_level_by_level_gathers(tree_cls, num_stored, batch):
    rng = np.random.default_rng(num_stored + batch)
    fast, reference = tree_cls(100_000), tree_cls(100_000)
    for _ in range(20):
        slots = rng.integers(0, num_stored, batch)
        values = rng.random(batch) * 10.0 ** rng.integers(-4, 4, batch)
        fast.set(slots, values)
        _set_by_gathers(reference, slots, values)
    for got, want in zip(fast.levels, reference.levels):
        np.testing.assert_array_equal(got, want)
    fast.set(np.array([], np.int64), np.array([]))  # an empty update changes nothing
    np.testing.assert_array_equal(fast.levels[0], reference.levels[0])
