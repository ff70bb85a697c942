"""numpy -> torch on the Learner's device (relayrl/core/to_device.py)."""
import warnings

import numpy as np
import torch

from relayrl.core.to_device import batch_to_device, numpy_to_device


def _read_only(array):
    array.flags.writeable = False  # as arrays from Ray's object store arrive
    return array


def test_a_read_only_array_becomes_a_tensor_without_torchs_warning():
    array = _read_only(np.arange(6, dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's "not writable" UserWarning would raise here
        tensor = numpy_to_device(array, "cpu")
        nested = batch_to_device({"obs": array, "infos": [{}]}, torch.device("cpu"))
    assert tensor.data_ptr() == array.__array_interface__["data"][0]  # on the CPU: the array's memory, no copy
    assert torch.equal(nested["obs"], torch.arange(6, dtype=torch.float32))
    assert nested["infos"] == [{}]


def test_a_writable_array_shares_its_memory():
    array = np.zeros(3, dtype=np.float32)
    tensor = numpy_to_device(array, None)
    array[1] = 5.0
    assert tensor[1].item() == 5.0
