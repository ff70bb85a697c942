"""Finalized columns of big rows keep one spare row, so the Learner's one appended step (the bootstrap
observation) is written in place instead of copying the column (relayrl/episodes/spare_row.py)."""
import copy
import pickle

import numpy as np
import pytest

from relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate import AddOneTsToEpisodesAndTruncate
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.episodes.spare_row import MIN_ROW_BYTES, MIN_ROWS

FRAME = (84, 84, 4)  # 28 KB rows


def frames(rows, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (rows,) + FRAME, np.uint8)


def finalized_buffer(rows=64, first=None):
    buffer = InfiniteLookbackBuffer()
    if first is not None:
        buffer.append(first)
    buffer.extend_finalized(frames(rows))
    return buffer


def test_the_first_append_writes_into_the_spare_row_and_gives_the_concatenated_values():
    buffer = finalized_buffer(first=frames(1, seed=1)[0])
    before = buffer.data
    view = buffer.get(slice(0, 65))
    expected = np.concatenate([before, frames(1, seed=2)])
    buffer.append(frames(1, seed=2)[0])
    np.testing.assert_array_equal(buffer.data, expected)
    assert np.shares_memory(buffer.data, before)  # in place: no new array for the 65 rows
    assert buffer.data.dtype == np.uint8 and len(buffer) == 66
    np.testing.assert_array_equal(view, expected[:65])  # an earlier view ends before the new row
    # one spare row only: a second append copies, as any append used to
    buffer.append(frames(1, seed=3)[0])
    assert not np.shares_memory(buffer.data, before)
    np.testing.assert_array_equal(buffer.data[:66], expected)


@pytest.mark.parametrize("case", ["small rows", "few rows", "other dtype", "other shape", "data replaced"])
def test_without_a_usable_spare_row_an_append_concatenates_as_before(case):
    if case == "small rows":
        buffer = InfiniteLookbackBuffer()
        buffer.extend_finalized(np.zeros((100, MIN_ROW_BYTES // 8 - 1), np.float64))
        item = np.ones(MIN_ROW_BYTES // 8 - 1)
    elif case == "few rows":
        buffer, item = finalized_buffer(rows=MIN_ROWS - 1), frames(1)[0]
    elif case == "other dtype":  # np.concatenate upcasts: so must the append
        buffer, item = finalized_buffer(), np.full(FRAME, 0.5)
    elif case == "other shape":  # np.concatenate's error, not a silent broadcast
        buffer, item = finalized_buffer(), np.zeros((84, 84, 1), np.uint8)
    else:
        buffer, item = finalized_buffer(), frames(1)[0]
        buffer.pop(0)
    before = buffer.data.copy()
    if case == "other shape":
        with pytest.raises(ValueError):
            buffer.append(item)
        return
    buffer.append(item)
    expected = np.concatenate([before, np.asarray(item)[None]])
    assert buffer.data.dtype == expected.dtype
    np.testing.assert_array_equal(buffer.data, expected)


def test_copies_and_pickles_do_not_share_or_ship_the_spare_row():
    buffer = finalized_buffer()
    shallow, deep, unpickled = copy.copy(buffer), copy.deepcopy(buffer), pickle.loads(pickle.dumps(buffer))
    assert len(pickle.dumps(buffer)) < buffer.data.nbytes + 1000  # the 64 rows, not the 65 of the room
    row = frames(1, seed=5)[0]
    shallow.append(row)  # no spare row: its own new array, the original's spare row untouched
    buffer.append(frames(1, seed=6)[0])
    np.testing.assert_array_equal(shallow.data[-1], row)
    for other in (deep, unpickled):
        other.append(row)
        np.testing.assert_array_equal(other.data[-1], row)
    np.testing.assert_array_equal(buffer.data[-1], frames(1, seed=6)[0])


def test_the_bootstrap_step_of_an_image_episode_is_appended_in_place():
    episode = SingleAgentEpisode(observations=[frames(1, seed=9)[0]])
    episode_frames = frames(40)
    # as the EnvRunner hands over the steps it kept as columns
    episode.add_env_steps(episode_frames, np.zeros(40, np.int64), np.ones(40, np.float32), to_numpy=True)
    before = episode.observations.data
    AddOneTsToEpisodesAndTruncate()(rl_module=None, batch={}, episodes=[episode])
    obs = episode.get_observations()
    assert len(obs) == 42 and np.shares_memory(obs, before)
    np.testing.assert_array_equal(obs[-1], episode_frames[-1])
    np.testing.assert_array_equal(obs[-2], episode_frames[-1])


@pytest.mark.parametrize("rows, has_room", [(MIN_ROWS, True), (MIN_ROWS - 1, False)])
def test_a_running_chunks_items_are_stacked_with_a_spare_row_when_finalized(rows, has_room):
    items = list(frames(rows))
    buffer = InfiniteLookbackBuffer(list(items))
    buffer.finalize()
    np.testing.assert_array_equal(buffer.data, np.array(items))
    assert buffer.data.dtype == np.uint8
    before = buffer.data
    buffer.append(frames(1, seed=4)[0])
    assert np.shares_memory(buffer.data, before) is has_room
    np.testing.assert_array_equal(buffer.data, np.concatenate([np.array(items), frames(1, seed=4)]))


def test_small_row_items_finalize_as_before():
    buffer = InfiniteLookbackBuffer([np.zeros(4, np.float32) for _ in range(100)])
    buffer.finalize()
    assert buffer._room is None and buffer.data.shape == (100, 4) and buffer.data.dtype == np.float32
