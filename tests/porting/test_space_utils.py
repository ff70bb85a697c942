"""RLlib's space helpers at `relayrl.utils.spaces.space_utils` (RLlib's path), with the examples of RLlib's
docstrings."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl.utils.spaces.space_utils import (
    batch,
    clip_action,
    flatten_space,
    flatten_to_single_ndarray,
    get_base_struct_from_space,
    get_original_space,
    is_composite_space,
    normalize_action,
    unbatch,
    unsquash_action,
)

SPACE = gym.spaces.Dict({"move": gym.spaces.Box(-2.0, 2.0, (2,), np.float32),
                         "pick": gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Box(0.0, 10.0, (1,))))})


def test_batch_and_unbatch_are_inverse():
    items = [{"a": 1, "b": (4, 7.0)}, {"a": 2, "b": (5, 8.0)}, {"a": 3, "b": (6, 9.0)}]
    batched = batch(items)
    np.testing.assert_array_equal(batched["a"], [1, 2, 3])
    np.testing.assert_array_equal(batched["b"][1], [7.0, 8.0, 9.0])
    assert unbatch(batched) == items
    concatenated = batch([np.zeros((2, 3)), np.ones((1, 3))], individual_items_already_have_batch_dim=True)
    assert concatenated.shape == (3, 3)
    with pytest.raises(ValueError, match="empty list"):
        batch([])


def test_flatten_to_single_ndarray_concatenates_every_leaf():
    out = flatten_to_single_ndarray([np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), np.array([7, 8, 9])])
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    single = np.arange(3)
    assert flatten_to_single_ndarray(single) is single


def test_space_structure_helpers():
    assert is_composite_space(SPACE) and not is_composite_space(SPACE["move"])
    assert flatten_space(SPACE) == [SPACE["move"], SPACE["pick"][0], SPACE["pick"][1]]
    assert get_base_struct_from_space(SPACE) == {"move": SPACE["move"], "pick": (SPACE["pick"][0], SPACE["pick"][1])}

    class Preprocessed(gym.spaces.Box):
        original_space = SPACE

    assert get_original_space(Preprocessed(0, 1, (3,))) is SPACE and get_original_space(SPACE) is SPACE


def test_actions_are_unsquashed_normalized_and_clipped_per_box_component():
    action = {"move": np.array([1.0, -0.5], np.float32), "pick": (2, np.array([0.0], np.float32))}
    unsquashed = unsquash_action(action, SPACE)
    np.testing.assert_allclose(unsquashed["move"], [2.0, -1.0])
    np.testing.assert_allclose(unsquashed["pick"][1], [5.0])
    assert unsquashed["pick"][0] == 2  # Discrete components pass through
    back = normalize_action(unsquashed, SPACE)
    np.testing.assert_allclose(back["move"], action["move"])
    np.testing.assert_allclose(back["pick"][1], action["pick"][1])
    clipped = clip_action({"move": np.array([5.0, -5.0]), "pick": (1, np.array([11.0]))}, SPACE)
    np.testing.assert_allclose(clipped["move"], [2.0, -2.0])
    np.testing.assert_allclose(clipped["pick"][1], [10.0])
