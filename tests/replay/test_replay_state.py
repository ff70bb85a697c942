"""get_state / set_state: plain data only, identical samples after a round trip."""
import json

import numpy as np
import pytest
from replay_chunks import make_chunk

from relayrl.core.columns import Columns
from relayrl.replay import EpisodeReplayBuffer, PrioritizedEpisodeReplayBuffer


def to_json(state):
    """JSON text of a state with numpy arrays swapped for lists (fails on anything else non-JSON)."""
    def default(value):
        if isinstance(value, np.ndarray):
            return {"__array__": value.tolist(), "dtype": str(value.dtype)}
        raise TypeError(f"not JSON-able: {type(value).__name__}")
    return json.dumps(state, default=default)


def from_json(text):
    def hook(obj):
        return np.array(obj["__array__"], dtype=obj["dtype"]) if "__array__" in obj else obj
    return json.loads(text, object_hook=hook)


def fill(buffer):
    buffer.add([make_chunk(0, 0, 4), make_chunk(1, 0, 6, terminated=True)])
    buffer.add([make_chunk(0, 4, 5, lookback=1), make_chunk(2, 0, 3)])  # wraps (capacity 16), 0 and 2 open


def assert_same_batches(a, b, **kwargs):
    for _ in range(3):
        x, y = a.sample(64, **kwargs), b.sample(64, **kwargs)
        assert x.keys() == y.keys()
        for key in x:
            np.testing.assert_array_equal(x[key], y[key], err_msg=key)


@pytest.mark.parametrize("cls", [EpisodeReplayBuffer, PrioritizedEpisodeReplayBuffer])
def test_round_trip_through_json_gives_identical_samples(cls):
    original = cls(16, seed=3, batch_size_B=8)
    fill(original)
    if cls is PrioritizedEpisodeReplayBuffer:
        batch = original.sample(16)
        original.update_priorities(np.arange(16.0), batch["indices"])
    state = original.get_state()
    restored = cls(16, seed=99)
    restored.set_state(from_json(to_json(state)))
    assert len(restored) == len(original) == 16 and restored.get_added_timesteps() == 18
    assert restored.get_num_episodes() == original.get_num_episodes() == 3
    assert_same_batches(original, restored, n_step=(1, 4), gamma=0.9)
    # open episodes continue identically after the restore
    for buffer in (original, restored):
        buffer.add([make_chunk(2, 3, 2, lookback=1, terminated=True), make_chunk(0, 9, 1, truncated=True)])
    assert_same_batches(original, restored, n_step=3, gamma=0.9)
    batch = restored.sample(200, n_step=5, gamma=1.0)
    rows = (batch[Columns.OBS][:, 0] == 2) & (batch[Columns.OBS][:, 1] == 0)
    assert np.all(batch[Columns.NEXT_OBS][rows] == [[2, 5]]) and np.all(batch[Columns.TERMINATEDS][rows])


def test_state_of_empty_buffer_and_wrong_capacity():
    empty = EpisodeReplayBuffer(8, seed=0)
    restored = EpisodeReplayBuffer(8)
    restored.set_state(from_json(to_json(empty.get_state())))
    assert len(restored) == 0
    restored.add([make_chunk(0, 0, 3, terminated=True)])
    assert len(restored.sample(4)[Columns.OBS]) == 4
    with pytest.raises(ValueError, match="capacity=8"):
        EpisodeReplayBuffer(9).set_state(empty.get_state())
    with pytest.raises(ValueError, match="version"):
        EpisodeReplayBuffer(8).set_state({**empty.get_state(), "version": 999})


def test_state_is_a_copy():
    buffer = EpisodeReplayBuffer(8, seed=0)
    buffer.add([make_chunk(0, 0, 3, terminated=True)])
    state = buffer.get_state()
    buffer.add([make_chunk(1, 0, 3, terminated=True)])
    assert len(state["storage"]["rewards"]) == 3 and state["storage"]["num_added"] == 3
