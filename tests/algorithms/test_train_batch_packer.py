"""IMPALA's TrainBatchPacker joins sampled batches into train batches of at least `size` env steps."""
import numpy as np

from relayrl.algorithms.impala.async_sampling import TrainBatchPacker


def _batch(rows_by_module):
    return {mid: {"obs": np.full((n, 2), i, np.float32), "state_in": {"h": np.zeros((n, 3))}}
            for i, (mid, n) in enumerate(rows_by_module.items())}


def test_a_module_missing_from_some_sampled_batches_keeps_its_rows_from_the_others():
    # Multi-agent: a fragment in which no agent of p1 acted has no p1 rows (CI found this with two remote runners).
    packer = TrainBatchPacker(size=20)
    packer.add(_batch({"p0": 10, "p1": 4}), steps=10)
    packer.add(_batch({"p0": 10}), steps=10)
    [(batch, steps)] = packer.take()
    assert steps == 20 and set(batch) == {"p0", "p1"}
    assert batch["p0"]["obs"].shape == (20, 2) and batch["p0"]["state_in"]["h"].shape == (20, 3)
    assert batch["p1"]["obs"].shape == (4, 2)
    packer.add(_batch({"p1": 3}), steps=10)
    packer.add(_batch({"p0": 5, "p1": 5}), steps=10)
    [(batch, _)] = packer.take()
    assert batch["p1"]["obs"].shape == (8, 2) and batch["p0"]["obs"].shape == (5, 2)
    assert packer.pending == 0
