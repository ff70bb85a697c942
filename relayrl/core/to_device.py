"""numpy -> torch on a device, the one way every batch takes to a Learner's device."""
import numpy as np
import torch


def numpy_to_device(array: np.ndarray, device) -> torch.Tensor:
    """A numpy array as a tensor on `device`: on a GPU through pinned memory with a non-blocking copy (the
    host goes on building the next tensors while the copy runs; torch keeps the pinned buffer alive until it
    is done); on the CPU the array's own memory, no copy."""
    tensor = torch.from_numpy(array)
    if device is None:
        return tensor
    device = torch.device(device)
    if device.type == "cpu":
        return tensor
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)
