"""Sum and min trees over a fixed number of leaves, updated and searched batch-wise.

A 16-ary tree stored level by level (`levels[0]` is the root, `levels[-1]` the leaves, padded with
the neutral value). Batch updates and the prefix-sum search loop over the few levels (5 for 100k
leaves, 6 for 1M), never over items; numpy's per-call cost dominates for small batches, so few
levels beat a binary tree's cheaper but more numerous steps.
"""
import numpy as np
import torch

ARITY = 16
_SHIFT = 4  # log2(ARITY)
# From this many targets on, the prefix-sum search takes torch's CPU cumsum: it adds each row left to right as
# numpy's does (the same float64 sums, tests/replay/test_prioritized_replay.py) and costs a quarter of numpy's
# for (256, 16) arrays, where numpy's is most of a level's time; below, the tensor wrapping costs more
# (find_prefix_sum, 1M leaves, 1 thread: 256 targets 195 -> 147 us, 192: 160 -> 130, 64: 89 -> 95).
TORCH_CUMSUM_MIN_ROWS = 128


class SegmentTree:
    """Tree whose inner nodes hold `op` (np.add / np.minimum) of their ARITY children."""

    def __init__(self, num_leaves: int, op, neutral: float):
        self.num_leaves = int(num_leaves)
        self.depth = 1
        while ARITY ** self.depth < self.num_leaves:
            self.depth += 1
        self.op = op
        self.neutral = float(neutral)
        self.levels = [np.full(ARITY ** level, self.neutral, np.float64) for level in range(self.depth + 1)]
        # children[l][i] = the ARITY children (on level l + 1) of node i on level l (views)
        self.children = [self.levels[level + 1].reshape(-1, ARITY) for level in range(self.depth)]

    @property
    def root(self) -> float:
        return float(self.levels[0][0])

    def leaves(self) -> np.ndarray:
        return self.levels[-1][:self.num_leaves]

    def set(self, leaf_indices: np.ndarray, values) -> None:
        """Set leaves (the last value wins for repeated indices) and refresh their ancestors.

        Repeated parents are recomputed more than once with the same result, which costs less than
        de-duplicating them level by level. Near the root the parents crowd into a short run: once the run
        from the lowest to the highest is no longer than the batch, the whole run is recomputed from a slice
        (no gather; unchanged nodes get their same value back), which for 256 leaves in a partly filled
        tree costs a fraction of the gathers (SAC's priority update, 1M leaves, 5000 stored: ~72 -> ~30 us).
        """
        nodes = np.asarray(leaf_indices, np.int64)
        self.levels[-1][nodes] = values
        if len(nodes) == 0:
            return
        low, high = int(nodes.min()), int(nodes.max())  # each level's parents lie in [low, high] shifted
        for level in range(self.depth - 1, -1, -1):
            nodes, low, high = nodes >> _SHIFT, low >> _SHIFT, high >> _SHIFT
            if high - low < len(nodes):  # from here up the run only shortens
                self.levels[level][low:high + 1] = self.op.reduce(self.children[level][low:high + 1], axis=1)
            else:
                self.levels[level][nodes] = self.op.reduce(self.children[level][nodes], axis=1)

    def set_range(self, start: int, stop: int, values) -> None:
        """Set leaves start..stop-1; ancestors of a contiguous run are contiguous runs (slices, no gathers)."""
        self.levels[-1][start:stop] = values
        low, high = start, stop
        for level in range(self.depth - 1, -1, -1):
            low, high = low >> _SHIFT, ((high - 1) >> _SHIFT) + 1
            self.levels[level][low:high] = self.op.reduce(self.children[level][low:high], axis=1)

    def rebuild(self) -> None:
        """Recompute all inner nodes from the leaves (after bulk-loading them)."""
        for level in range(self.depth - 1, -1, -1):
            self.levels[level][:] = self.op.reduce(self.children[level], axis=1)

    def load_leaves(self, values: np.ndarray) -> None:
        """Replace all leaves (missing ones get the neutral value) and rebuild."""
        self.levels[-1][:] = self.neutral
        self.levels[-1][:len(values)] = values
        self.rebuild()


class SumTree(SegmentTree):
    def __init__(self, num_leaves: int):
        super().__init__(num_leaves, np.add, 0.0)

    def find_prefix_sum(self, targets: np.ndarray) -> np.ndarray:
        """For each target u in [0, total): the leaf j with sum(leaves[:j]) <= u < sum(leaves[:j+1]).

        Per level the child taken is the first whose running sum exceeds u, so a leaf of value 0 is
        never chosen while the non-zero leaves form a prefix (as stored transitions do).
        """
        targets = np.array(targets, np.float64)
        torch_cumsum = len(targets) >= TORCH_CUMSUM_MIN_ROWS
        rows = np.arange(len(targets))
        nodes = np.zeros(len(targets), np.int64)
        for children in self.children[self._empty_top_levels():]:
            values = np.take(children, nodes, axis=0)  # cheaper than children[nodes]
            running = torch.cumsum(torch.from_numpy(values), 1).numpy() if torch_cumsum else np.cumsum(values, 1)
            # first child whose running sum exceeds u; none (u >= total by rounding) gives child 0,
            # the left end of a subtree with a positive sum, which holds a non-zero leaf
            child = (running > targets[:, None]).argmax(1)
            targets -= (running - values)[rows, child]
            nodes = (nodes << _SHIFT) + child
        return nodes


    def _empty_top_levels(self) -> int:
        """How many top levels have only their first child non-zero (leaves stored in a prefix of the tree):
        the search takes child 0 there and subtracts nothing (u - 0.0 == u), so it may start below them."""
        skip = 0
        for children in self.children[:-1]:
            if children[0, 1:].any():  # node 0's other children: the only possible non-zero ones at this level
                break
            skip += 1
        return skip


class MinTree(SegmentTree):
    def __init__(self, num_leaves: int):
        super().__init__(num_leaves, np.minimum, np.inf)
