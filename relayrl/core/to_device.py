"""numpy -> torch on a device, the one way every batch takes to a Learner's device."""
import warnings

import numpy as np
import torch

from relayrl.core.columns import Columns
from relayrl.core.pinned import pinned_tensor_of


def numpy_to_device(array: np.ndarray, device) -> torch.Tensor:
    """A numpy array as a tensor on `device`: on a GPU through pinned memory with a non-blocking copy (the
    host goes on building the next tensors while the copy runs; torch keeps the pinned buffer alive until it
    is done); on the CPU the array's own memory, no copy. Read-only arrays (e.g. from Ray's object store) without
    torch's warning: nothing writes into them."""
    if array.flags.writeable:
        tensor = torch.from_numpy(array)
    else:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            tensor = torch.from_numpy(array)
    if device is None:
        return tensor
    device = torch.device(device)
    if device.type == "cpu":
        return tensor
    if device.type == "cuda":
        pinned = pinned_tensor_of(array)  # already in pinned memory (BatchIndividualItems(pin_memory=True))
        if pinned is not None:
            return pinned.to(device, non_blocking=True)
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def batch_to_device(value, device):
    """A (nested) train batch as tensors on `device`: numpy arrays through `numpy_to_device`, tensors moved if
    elsewhere; infos and other objects as they are."""
    if isinstance(value, dict):
        return {k: (v if k == Columns.INFOS else batch_to_device(v, device)) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype != object:
        return numpy_to_device(value, device)
    if isinstance(value, torch.Tensor) and value.device != device:  # e.g. a user's batch of CPU tensors
        return value.to(device)
    if isinstance(value, tuple):  # (Tuple observations)
        return tuple(batch_to_device(v, device) for v in value)
    return value
