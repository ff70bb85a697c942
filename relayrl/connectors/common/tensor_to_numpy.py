"""Default module-to-env piece: tensors in the module output -> numpy arrays."""
import torch

from relayrl.connectors.connector_v2 import ConnectorV2


def to_numpy(data):
    if isinstance(data, torch.Tensor):  # the common leaf first; detach only what needs it (cheaper)
        if data.requires_grad:
            data = data.detach()
        return data.numpy() if data.is_cpu else data.cpu().numpy()
    if isinstance(data, dict):
        return {k: to_numpy(v) for k, v in data.items()}
    if isinstance(data, tuple):
        return tuple(to_numpy(v) for v in data)
    return data


class TensorToNumpy(ConnectorV2):
    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        return to_numpy(batch)
