"""Unit tests for InfiniteLookbackBuffer index/fill/set semantics (list and numpy modes)."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer


def make(finalized=False, lookback=2, space=None):
    # data: lookback items 0, 1 (L0, L1), then ts 0..2 -> 10, 11, 12
    buf = InfiniteLookbackBuffer([0, 1, 10, 11, 12], lookback=lookback, space=space)
    if finalized:
        buf.finalize()
    return buf


def as_list(x):
    return np.asarray(x).tolist()


both = pytest.mark.parametrize("finalized", [False, True])


def test_len_lookback_and_constructor_clipping():
    buf = make()
    assert len(buf) == 3 and buf.lookback == 2 and buf.len_incl_lookback() == 5
    assert InfiniteLookbackBuffer([1, 2], lookback=5).lookback == 2
    empty = InfiniteLookbackBuffer()
    assert len(empty) == 0 and not empty.finalized
    assert InfiniteLookbackBuffer(np.arange(4), lookback=1).finalized
    with pytest.raises(ValueError):
        InfiniteLookbackBuffer([1], lookback=-1)


@both
def test_get_all_excludes_lookback(finalized):
    buf = make(finalized)
    out = buf.get()
    assert as_list(out) == [10, 11, 12]
    assert isinstance(out, np.ndarray) == finalized


@both
def test_get_int(finalized):
    buf = make(finalized)
    assert buf.get(0) == 10 and buf.get(2) == 12
    assert buf.get(-1) == 12
    assert buf.get(-4) == 1  # counting from the end runs into the lookback
    assert buf.get(-1, neg_index_as_lookback=True) == 1
    assert buf.get(-2, neg_index_as_lookback=True) == 0
    assert buf.get(np.int64(1)) == 11
    assert buf[1] == 11
    for idx, nil in [(3, False), (-6, False), (-3, True), (5, True)]:
        with pytest.raises(IndexError):
            buf.get(idx, neg_index_as_lookback=nil)
        assert buf.get(idx, neg_index_as_lookback=nil, fill=-7) == -7


@both
def test_get_list(finalized):
    buf = make(finalized)
    out = buf.get([0, -1, 1])
    assert as_list(out) == [10, 12, 11]
    assert isinstance(out, np.ndarray) == finalized
    assert as_list(buf.get([-2, -1, 0], neg_index_as_lookback=True)) == [0, 1, 10]
    with pytest.raises(IndexError):
        buf.get([0, 7])
    assert as_list(buf.get([-7, -6, -5, -1], fill=-1)) == [-1, -1, 0, 12]
    assert as_list(buf.get([2, 3, 4], fill=9)) == [12, 9, 9]
    assert as_list(buf.get([])) == []


@both
def test_get_slice(finalized):
    buf = make(finalized)
    assert as_list(buf.get(slice(None, None))) == [10, 11, 12]
    assert as_list(buf.get(slice(1, None))) == [11, 12]
    assert as_list(buf.get(slice(None, -1))) == [10, 11]
    assert as_list(buf.get(slice(-2, None))) == [11, 12]
    assert as_list(buf.get(slice(-4, None))) == [1, 10, 11, 12]  # from the end, into lookback
    assert as_list(buf.get(slice(-2, 1), neg_index_as_lookback=True)) == [0, 1, 10]
    assert as_list(buf.get(slice(None, None, -1))) == [12, 11, 10]
    assert as_list(buf.get(slice(None, None, 2))) == [10, 12]
    assert as_list(buf[0:2]) == [10, 11]
    # Out-of-range parts are clipped like Python slices when no fill is given.
    assert as_list(buf.get(slice(-10, 1))) == [0, 1, 10]
    assert as_list(buf.get(slice(1, 10))) == [11, 12]
    assert as_list(buf.get(slice(-5, -1), neg_index_as_lookback=True)) == [0]
    assert as_list(buf.get(slice(2, 1))) == []


@both
def test_get_slice_fill(finalized):
    buf = make(finalized)
    assert as_list(buf.get(slice(-4, 2), neg_index_as_lookback=True, fill=-1)) == [-1, -1, 0, 1, 10, 11]
    assert as_list(buf.get(slice(1, 5), fill=-1)) == [11, 12, -1, -1]
    assert as_list(buf.get(slice(-7, -3), fill=-1)) == [-1, -1, 0, 1]
    assert as_list(buf.get(slice(5, 7), fill=-1)) == [-1, -1]  # entirely past the end
    assert as_list(buf.get(slice(4, 0, -1), fill=-1)) == [-1, -1, 12, 11]


def test_documented_fill_examples():
    # RLlib doc: 1 reward, no lookback -> slice(-3, 1) left-fills 3 slots.
    for finalized in (False, True):
        buf = InfiniteLookbackBuffer([5.0])
        if finalized:
            buf.finalize()
        assert as_list(buf.get(slice(-3, 1), neg_index_as_lookback=True, fill=0.0)) == [0.0, 0.0, 0.0, 5.0]
        # stop=0 is exclusive -> ts 0 is not part of the result.
        assert as_list(buf.get(slice(-4, 0), neg_index_as_lookback=True, fill=0.0)) == [0.0] * 4
        assert as_list(buf.get([-3, -2, -1], fill=0.0)) == [0.0, 0.0, 5.0]


@both
def test_fill_array_items_get_item_shape_and_dtype(finalized):
    items = [np.full((2, 3), i, dtype=np.float32) for i in range(3)]
    buf = InfiniteLookbackBuffer(items)
    if finalized:
        buf.finalize()
    out = buf.get([-5, -4, -3, -2, -1], fill=0.0)
    out = np.stack(out) if not finalized else out
    assert out.shape == (5, 2, 3) and out.dtype == np.float32
    assert out[:2].sum() == 0 and np.all(out[2:, 0, 0] == [0, 1, 2])
    single = buf.get(10, fill=7)
    assert single.shape == (2, 3) and np.all(single == 7)


def test_fill_uses_space_even_when_empty():
    buf = InfiniteLookbackBuffer(space=gym.spaces.Box(-1, 1, (4,), np.float32))
    f = buf.get(-1, fill=0.5)
    assert f.shape == (4,) and f.dtype == np.float32 and np.all(f == 0.5)
    buf.finalize()
    assert buf.get().shape == (0, 4)
    assert buf.get(slice(-2, 0), neg_index_as_lookback=True, fill=0.0).shape == (2, 4)


@both
def test_one_hot_discrete(finalized):
    buf = InfiniteLookbackBuffer([2, 0, 1], lookback=1, space=gym.spaces.Discrete(3))
    if finalized:
        buf.finalize()
    assert np.asarray(buf.get(one_hot_discrete=True)).tolist() == [[1, 0, 0], [0, 1, 0]]
    one = buf.get(-1, neg_index_as_lookback=True, one_hot_discrete=True)
    assert one.dtype == np.float32 and one.tolist() == [0, 0, 1]
    filled = np.asarray(buf.get(slice(-3, 1), neg_index_as_lookback=True, fill=0, one_hot_discrete=True))
    assert filled.tolist() == [[0, 0, 0], [0, 0, 0], [0, 0, 1], [1, 0, 0]]
    assert np.asarray(buf.get([1, 5], fill=0, one_hot_discrete=True)).tolist() == [[0, 1, 0], [0, 0, 0]]
    assert buf.get(0) == 0  # no one-hot unless asked


def test_one_hot_multi_discrete_and_discrete_start():
    md = InfiniteLookbackBuffer([np.array([1, 0]), np.array([0, 2])], space=gym.spaces.MultiDiscrete([2, 3]))
    assert md.get(1, one_hot_discrete=True).tolist() == [1, 0, 0, 0, 1]
    md.finalize()
    assert md.get(one_hot_discrete=True).tolist() == [[0, 1, 1, 0, 0], [1, 0, 0, 0, 1]]
    shifted = InfiniteLookbackBuffer([-1, 1], space=gym.spaces.Discrete(3, start=-1))
    assert np.asarray(shifted.get(one_hot_discrete=True)).tolist() == [[1, 0, 0], [0, 0, 1]]


@both
def test_set_int_list_slice_all(finalized):
    buf = make(finalized)
    buf.set(20, at_indices=0)
    buf.set(99, at_indices=-1, neg_index_as_lookback=True)
    assert as_list(buf.get()) == [20, 11, 12] and buf.get(-1, neg_index_as_lookback=True) == 99
    buf.set([31, 32], at_indices=[1, -1])
    assert as_list(buf.get()) == [20, 31, 32]
    buf.set([41, 42], at_indices=slice(0, 2))
    assert as_list(buf.get()) == [41, 42, 32]
    buf.set([50, 51, 52])
    assert as_list(buf.get()) == [50, 51, 52] and buf.get(-2, neg_index_as_lookback=True) == 0
    buf.set(np.array([60, 61, 62]))
    assert as_list(buf.get()) == [60, 61, 62]
    # Clipped slice: only ts 1, 2 exist.
    buf.set([71, 72], at_indices=slice(1, 10))
    assert as_list(buf.get()) == [60, 71, 72]
    assert len(buf) == 3 and buf.lookback == 2


@both
def test_set_errors(finalized):
    buf = make(finalized)
    with pytest.raises(IndexError):
        buf.set(1, at_indices=3)
    with pytest.raises(IndexError):
        buf.set(1, at_indices=-3, neg_index_as_lookback=True)
    with pytest.raises(IndexError):
        buf.set([1, 2], at_indices=[0, 9])
    with pytest.raises(ValueError):
        buf.set([1, 2])  # needs 3 items
    with pytest.raises(ValueError):
        buf.set([1], at_indices=slice(0, 2))
    assert as_list(buf.get()) == [10, 11, 12]


@both
def test_append_extend_pop(finalized):
    buf = make(finalized)
    buf.append(13)
    buf.extend([14, 15])
    assert as_list(buf.get()) == [10, 11, 12, 13, 14, 15]
    assert buf.pop() == 15 and len(buf) == 5
    assert buf.pop(0) == 10 and buf.lookback == 2
    assert buf.pop(-5) == 1 and buf.lookback == 1  # popping lookback shrinks it
    assert as_list(buf.get()) == [11, 12, 13, 14] and buf.get(-1, neg_index_as_lookback=True) == 0
    with pytest.raises(IndexError):
        buf.pop(10)
    buf.extend(np.array([16]))
    assert buf.get(-1) == 16


def test_append_to_empty_finalized_buffer():
    buf = InfiniteLookbackBuffer()
    buf.finalize()
    buf.append(np.array([1.0, 2.0]))
    buf.extend([np.array([3.0, 4.0])])
    assert buf.get().tolist() == [[1, 2], [3, 4]]


def test_dict_items_finalize_get_fill_set():
    space = gym.spaces.Dict({"a": gym.spaces.Box(-5, 5, (2,), np.float32), "b": gym.spaces.Discrete(4)})
    items = [{"a": np.full(2, i, np.float32), "b": i} for i in range(4)]
    buf = InfiniteLookbackBuffer(items, lookback=1, space=space)
    assert buf.get(-1)["b"] == 3
    buf.finalize()
    assert set(buf.data) == {"a", "b"} and buf.data["a"].shape == (4, 2)
    assert len(buf) == 3
    allv = buf.get()
    assert allv["a"][:, 0].tolist() == [1, 2, 3] and allv["b"].tolist() == [1, 2, 3]
    one = buf.get(-1, neg_index_as_lookback=True)
    assert one["b"] == 0 and one["a"].tolist() == [0, 0]
    filled = buf.get(slice(-3, 1), neg_index_as_lookback=True, fill=0)
    assert filled["a"].shape == (4, 2) and filled["b"].tolist() == [0, 0, 0, 1]
    oh = buf.get([0], one_hot_discrete=True)
    assert oh["b"].tolist() == [[0, 1, 0, 0]] and oh["a"].shape == (1, 2)
    buf.set({"a": np.array([9, 9], np.float32), "b": 2}, at_indices=0)
    assert buf.get(0)["a"].tolist() == [9, 9] and buf.get(0)["b"] == 2
    buf.append({"a": np.zeros(2, np.float32), "b": 1})
    assert len(buf) == 4 and buf.get(-1)["b"] == 1
    assert buf.pop()["b"] == 1 and len(buf) == 3


def test_tuple_items_finalize():
    items = [(np.array([i, i]), i) for i in range(3)]
    buf = InfiniteLookbackBuffer(items)
    buf.finalize()
    assert isinstance(buf.data, tuple) and buf.data[0].shape == (3, 2)
    assert buf.get(-1)[1] == 2 and len(buf) == 3


def test_infos_fill_is_returned_as_is():
    buf = InfiniteLookbackBuffer([{"x": 1}])
    assert buf.get([-2, -1], fill={}) == [{}, {"x": 1}]


@both
def test_ignore_last_ts(finalized):
    buf = make(finalized)
    assert as_list(buf.get(_ignore_last_ts=True)) == [10, 11]
    assert buf.get(-1, _ignore_last_ts=True) == 11
    with pytest.raises(IndexError):
        buf.get(2, _ignore_last_ts=True)


@both
def test_state_roundtrip_and_eq(finalized):
    buf = make(finalized, space=gym.spaces.Discrete(20))
    state = buf.get_state()
    restored = InfiniteLookbackBuffer.from_state(state)
    assert restored == buf and restored.space == buf.space and restored.finalized == finalized
    buf.set(77, at_indices=0)  # the state is a snapshot, not a view
    assert restored.get(0) == 10 and restored != buf


def test_bad_indices_type():
    with pytest.raises(TypeError):
        make().get("a")
    with pytest.raises(ValueError):
        make().get(slice(None, None, 0))


def test_fill_takes_the_shape_of_rewritten_items_not_the_space():
    # A connector (e.g. FlattenObservations or a custom piece) may write back items of another shape.
    space = gym.spaces.Box(-1, 1, (4,), np.float32)
    buf = InfiniteLookbackBuffer([np.ones(5, np.float32)], space=space)
    filled = buf.get([-2, -1], fill=0.0)
    assert filled[0].shape == (5,) and not filled[0].any()
    assert np.array_equal(filled[1], np.ones(5, np.float32))
