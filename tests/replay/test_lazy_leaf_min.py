"""LazyLeafMin gives the exact minimum of the stored leaves, as the min tree it replaces did."""
import numpy as np

from relayrl.replay.lazy_leaf_min import LazyLeafMin
from relayrl.replay.segment_tree import MinTree, SumTree


def test_lazy_min_matches_a_min_tree_through_writes_overwrites_and_repeats():
    rng = np.random.default_rng(0)
    capacity = 50
    tree, reference = SumTree(capacity), MinTree(capacity)
    lazy = LazyLeafMin(tree.leaves())
    num_stored, next_slot, rescans = 0, 0, 0
    for step in range(400):
        if step % 3 == 0:  # an add: a run of new slots at the largest priority, wrapping around
            count = int(rng.integers(1, 8))
            slots = (next_slot + np.arange(count)) % capacity
            next_slot = (next_slot + count) % capacity
            num_stored = min(capacity, num_stored + count)
            values = np.full(count, 5.0)
        else:  # a priority update of drawn slots, repeats included (the last value wins)
            slots = rng.integers(0, max(num_stored, 1), size=8)
            values = rng.uniform(0.01, 4.0, size=8)
        lazy.before_write(slots)
        tree.set(slots, values)
        reference.set(slots, values)
        lazy.after_write(slots)
        rescans += lazy._value is None
        assert lazy.value(num_stored) == reference.root
    assert 0 < rescans < 200  # it did have to rescan, but not at every write


def test_lazy_min_forgets_after_a_bulk_load():
    tree = SumTree(8)
    lazy = LazyLeafMin(tree.leaves())
    tree.load_leaves(np.array([3.0, 2.0, 4.0]))
    lazy.forget()
    assert lazy.value(3) == 2.0
    tree.load_leaves(np.array([3.0, 7.0, 4.0]))
    lazy.forget()
    assert lazy.value(3) == 3.0
