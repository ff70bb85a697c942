"""relayrl.testing.compare.assert_same_tree: exact nested equality that names where two results differ."""
import numpy as np
import pytest
import torch

from relayrl.testing.compare import assert_same_tree


def test_equal_trees_pass():
    tree = {"w": torch.arange(3.0), "obs": [np.zeros(2, np.float32), (1, 2.5)], "t": 4}
    assert_same_tree(tree, {"w": torch.arange(3.0), "obs": [np.zeros(2, np.float32), (1, 2.5)], "t": 4})


@pytest.mark.parametrize("other, where", [
    ({"w": torch.tensor([0.0, 1.0, 3.0]), "obs": [np.zeros(2), (1,)]}, "state.w"),
    ({"w": torch.arange(3.0), "obs": [np.ones(2), (1,)]}, "state.obs[0]"),
    ({"w": torch.arange(3.0), "obs": [np.zeros(2), (2,)]}, "state.obs[1][0]"),
    ({"w": torch.arange(3.0), "obs": [np.zeros(2)]}, "state.obs: length"),
    ({"w": torch.arange(3.0)}, "state: keys"),
])
def test_a_difference_is_named_by_its_path(other, where):
    with pytest.raises(AssertionError, match=where.replace("[", r"\[").replace("]", r"\]")):
        assert_same_tree({"w": torch.arange(3.0), "obs": [np.zeros(2), (1,)]}, other, "state")


def test_strict_types_tells_dtypes_and_item_types_apart():
    assert_same_tree(np.zeros(2, np.float32), np.zeros(2, np.float64))  # equal values
    with pytest.raises(AssertionError, match="float32"):
        assert_same_tree(np.zeros(2, np.float32), np.zeros(2, np.float64), strict_types=True)
    assert_same_tree([np.float64(1.0)], [1.0])
    with pytest.raises(AssertionError, match="float64 != float"):
        assert_same_tree([np.float64(1.0)], [1.0], strict_types=True)
    with pytest.raises(AssertionError, match="list != tuple"):
        assert_same_tree([1], (1,), strict_types=True)
