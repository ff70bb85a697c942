"""The sampling loop's per-step helpers give what their slower per-item forms give."""
import numpy as np
import pytest

from relayrl.episodes.infinite_lookback_buffer import _stack, unbatch_items
from relayrl.env.vector_env import info_at, infos_per_env

N = 3
FINAL_ONLY = {"final_obs": np.array([None, np.zeros(2), None], dtype=object), "_final_obs": np.array([0, 1, 0], bool),
              "final_info": {"x": np.array([0, 5, 0])}, "_final_info": np.array([0, 1, 0], bool)}
MIXED = dict(FINAL_ONLY, t=np.array([1, 2, 3]), _t=np.array([1, 0, 1], bool),
             nested={"a": np.array([1.0, 2.0, 3.0]), "_a": np.ones(3, bool)}, _nested=np.ones(3, bool))


@pytest.mark.parametrize("infos", [{}, FINAL_ONLY, MIXED], ids=["empty", "final-only", "mixed"])
def test_infos_per_env_is_info_at_for_every_env(infos):
    per_env = infos_per_env(infos, N)
    assert per_env == [info_at(infos, i) for i in range(N)]
    assert len({id(info) for info in per_env}) == N  # each env gets its own dict


def test_unbatch_items_gives_the_items_indexing_gives():
    rows = np.arange(6, dtype=np.float32).reshape(N, 2)
    for values in (rows, np.array([0.5, 1.5, 2.5], np.float32), [1, 2, 3]):
        items = unbatch_items(values)
        assert len(items) == N
        for i in range(N):
            assert type(items[i]) is type(values[i]) and np.array_equal(items[i], values[i])
    nested = {"h": rows, "c": np.arange(3)}
    assert all(np.array_equal(unbatch_items(nested)[i]["h"], rows[i]) for i in range(N))
    pairs = (rows, np.arange(3))  # a tuple output is split per env too, not into its components
    assert all(np.array_equal(unbatch_items(pairs)[i][0], rows[i]) for i in range(N))


class Tagged(np.ndarray):
    pass


@pytest.mark.parametrize("items", [
    [np.zeros(3, np.float32), np.ones(3, np.float32)],
    [np.zeros(2, np.float32), np.ones(2, np.float64)],  # dtype promotion as np.stack
    [np.array(1), np.array(2)],  # 0-d arrays
    [np.zeros((0, 2))] * 2,
    [np.zeros(2), np.ones(2).view(Tagged)],  # not all plain arrays: np.stack itself
])
def test_stack_of_arrays_matches_np_stack(items):
    out, expected = _stack(items), np.stack(items)
    assert type(out) is type(expected) and out.dtype == expected.dtype and out.shape == expected.shape
    assert np.array_equal(out, expected)


def test_stack_of_different_shapes_raises_like_np_stack():
    with pytest.raises(ValueError):
        _stack([np.zeros(2), np.zeros(3)])


def test_an_episode_given_only_some_columns_is_still_validated():
    from relayrl.episodes.single_agent_episode import SingleAgentEpisode

    assert len(SingleAgentEpisode()) == 0
    with pytest.raises(AssertionError):
        SingleAgentEpisode(infos=[{}])  # an info without its observation
    with pytest.raises(AssertionError):
        SingleAgentEpisode(extra_model_outputs={"a": [1.0]})  # an output without its step
