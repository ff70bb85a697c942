"""Seeding the global random generators (Python's `random`, numpy's and torch's) in one call."""
import random
from typing import Optional

import numpy as np


def seed_everything(seed: Optional[int]) -> None:
    """Seed `random`, numpy's global generator and torch's (all devices); None leaves them as they are."""
    if seed is None:
        return
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def update_global_seed_if_necessary(framework: Optional[str] = None, seed: Optional[int] = None) -> None:
    """RLlib's name (`ray.rllib.utils.debug`): seed the global generators if `seed` is given. relayrl is torch
    only: `framework` may be "torch" (or None)."""
    if framework not in (None, "torch"):
        raise ValueError(f"update_global_seed_if_necessary(framework={framework!r}): relayrl runs torch only.")
    seed_everything(seed)


__all__ = ["seed_everything", "update_global_seed_if_necessary"]
