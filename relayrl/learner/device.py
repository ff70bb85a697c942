"""Where a Learner trains: `num_gpus_per_learner > 0` puts it on cuda:0 (relayrl/core/devices.py)."""
import torch

from relayrl.core.devices import device_for


def learner_device(config) -> torch.device:
    return device_for("num_gpus_per_learner", getattr(config, "num_gpus_per_learner", 0) or 0)
