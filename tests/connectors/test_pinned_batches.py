"""A GPU Learner's batch is concatenated straight into pinned memory (relayrl/core/pinned.py): big numeric
columns only, with the same values as the plain concatenation. CUDA's pinned allocator is faked here (this
torch build has none); tests/gpu/test_gpu_pinned_batches.py checks the real one."""
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.connectors import BatchIndividualItems, ConnectorV2
from relayrl.connectors.builders import build_learner_pipeline
from relayrl.core import pinned
from relayrl.core.pinned import PIN_FROM_BYTES, pinned_tensor_of, worth_pinning
from tests.connectors.test_connector_v2 import two_episodes


@pytest.fixture
def fake_pinned(monkeypatch):
    """empty_pinned as a plain allocation that remembers what it handed out."""
    handed_out = []

    def empty(shape, dtype):
        array = np.empty(shape, dtype)
        handed_out.append(array)
        return array

    monkeypatch.setattr(pinned, "empty_pinned", empty)
    return handed_out


def frames_batch():
    """Two episodes' Pong-sized frames (1.4 MB and 0.9 MB) as batched items, two single items (0.56 MB each),
    a small column and a float64 one."""
    e1, e2 = two_episodes()
    rng = np.random.default_rng(0)
    batch = {}
    for episode, rows in ((e1, 50), (e2, 32)):
        ConnectorV2.add_n_batch_items(batch, "obs", rng.integers(0, 256, (rows, 84, 84, 4), np.uint8), rows,
                                      episode)
        ConnectorV2.add_n_batch_items(batch, "rewards", rng.random(rows, np.float32), rows, episode)
        ConnectorV2.add_n_batch_items(batch, "values64", rng.random((rows, 2000)), rows, episode)
    ConnectorV2.add_batch_item(batch, "single", rng.integers(0, 256, (84, 84, 80), np.uint8), e1)
    ConnectorV2.add_batch_item(batch, "single", rng.integers(0, 256, (84, 84, 80), np.uint8), e2)
    return batch


def test_big_numeric_columns_are_concatenated_into_pinned_memory_with_the_same_values(fake_pinned):
    plain = BatchIndividualItems()(rl_module=None, batch=frames_batch(), episodes=[])
    assert not fake_pinned
    out = BatchIndividualItems(pin_memory=True)(rl_module=None, batch=frames_batch(), episodes=[])
    assert set(out) == set(plain)
    for column in plain:
        np.testing.assert_array_equal(out[column], plain[column])
        assert out[column].dtype == plain[column].dtype
    # the 82 rows of frames (2.3 MB) and the two single items stacked (1.1 MB); not the small or float64 ones
    assert [array.shape for array in fake_pinned] == [(82, 84, 84, 4), (2, 84, 84, 80)]
    assert fake_pinned[0] is out["obs"] and fake_pinned[1] is out["single"]


def test_what_is_worth_pinning():
    assert worth_pinning((PIN_FROM_BYTES,), np.uint8) and worth_pinning((PIN_FROM_BYTES // 4,), np.float32)
    assert not worth_pinning((PIN_FROM_BYTES - 1,), np.uint8)
    assert not worth_pinning((PIN_FROM_BYTES,), np.float64)  # NumpyToTensor casts it to float32: a new array
    assert not worth_pinning((PIN_FROM_BYTES,), object)


def test_only_the_whole_of_a_pinned_tensor_is_sent_as_it_is(monkeypatch):
    assert pinned_tensor_of(np.zeros((4, 3))) is None
    assert pinned_tensor_of(torch.zeros(4, 3).numpy()) is None  # not pinned
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self: True)
    array = torch.zeros(4, 3).numpy()
    tensor = pinned_tensor_of(array)
    assert tensor is not None and tensor.data_ptr() == array.ctypes.data
    assert pinned_tensor_of(array[1:]) is None and pinned_tensor_of(array[:, :2]) is None


@pytest.mark.parametrize("device, pins", [("cuda", True), (torch.device("cuda:0"), True), ("cpu", False),
                                          (None, False)])
def test_a_learner_pipeline_pins_its_batches_only_for_a_gpu(device, pins):
    pipeline = build_learner_pipeline(PPOConfig().environment("CartPole-v1"), None, None, device=device)
    (batching,) = [piece for piece in pipeline.connectors if isinstance(piece, BatchIndividualItems)]
    assert batching._pin_memory is pins
