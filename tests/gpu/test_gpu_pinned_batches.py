"""On a GPU Learner the batch's big columns are concatenated into pinned memory and sent to the GPU from there,
without pin_memory()'s extra host copy (relayrl/core/pinned.py). Marked `gpu`: skipped without CUDA."""
import numpy as np
import torch
from gpu_configs import NEEDS_CUDA, small_ppo

from relayrl.connectors import BatchIndividualItems, ConnectorV2
from relayrl.core import to_device
from relayrl.core.pinned import pinned_tensor_of
from relayrl.testing import DotSideEnv
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

pytestmark = NEEDS_CUDA


def test_a_pinned_column_reaches_the_gpu_with_its_values():
    e1, e2 = SingleAgentEpisode(id_="e1"), SingleAgentEpisode(id_="e2")
    frames = np.random.default_rng(0).integers(0, 256, (2, 40, 84, 84, 4), np.uint8)
    batch = {}
    for episode, rows in ((e1, frames[0]), (e2, frames[1])):
        ConnectorV2.add_n_batch_items(batch, "obs", rows, len(rows), episode)
    out = BatchIndividualItems(pin_memory=True)(rl_module=None, batch=batch, episodes=[])
    source = pinned_tensor_of(out["obs"])
    assert source is not None and source.is_pinned()
    on_gpu = to_device.numpy_to_device(out["obs"], "cuda")
    assert on_gpu.device.type == "cuda"
    np.testing.assert_array_equal(on_gpu.cpu().numpy(), frames.reshape(80, 84, 84, 4))


def test_a_ppo_image_update_sends_its_frames_from_pinned_memory(monkeypatch):
    sent = []

    def spy(array):
        tensor = pinned_tensor_of(array)
        if tensor is not None:
            sent.append(tuple(tensor.shape))
        return tensor

    monkeypatch.setattr(to_device, "pinned_tensor_of", spy)
    algo = (small_ppo(DotSideEnv, {}).training(train_batch_size=1024, minibatch_size=256)
            .learners(num_gpus_per_learner=1).build_algo())
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert any(shape[0] >= 1024 and shape[1:] == (42, 42, 1) for shape in sent), sent
    assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
    assert torch.cuda.is_available()
