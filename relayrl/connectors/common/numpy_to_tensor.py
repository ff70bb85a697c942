"""Default piece: numpy arrays in the batch -> torch tensors (on the module's device; to a GPU through pinned
memory with non-blocking copies)."""
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns
from relayrl.core.to_device import numpy_to_device


def to_tensor(data, device=None):
    """Convert (nested) numpy data to tensors; non-numeric data (infos, strings) is left as is."""
    if isinstance(data, np.ndarray):  # the common leaf first
        if data.dtype.kind not in "biuf":
            return data
        if data.dtype == np.float64:  # the modules compute in float32
            data = data.astype(np.float32)
        return numpy_to_device(np.ascontiguousarray(data), device)
    if isinstance(data, dict):
        return {k: (v if k == Columns.INFOS else to_tensor(v, device)) for k, v in data.items()}
    if isinstance(data, tuple):
        return tuple(to_tensor(v, device) for v in data)
    return data


class NumpyToTensor(ConnectorV2):
    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *,
                 as_learner_connector: bool = False, pin_memory: bool = False, device=None, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._as_learner_connector = as_learner_connector
        self._device = None if device in (None, "cpu") else device

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        return to_tensor(batch, self._device)
