"""TorchScript export of an RLModule's inference forward pass: obs tensor -> action distribution inputs.

The file loads with plain `torch.jit.load` (no relayrl needed) and gives the same outputs as
`module.forward_inference({"obs": obs})["action_dist_inputs"]`; argmax of them is the greedy action
for discrete action spaces.
"""
import os
import warnings
from typing import Callable, Dict, Optional

import numpy as np
import torch
from torch import nn

from relayrl.core.columns import Columns


class _InferenceForward(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]


def export_torchscript(module, path: str, example_obs: Optional[torch.Tensor] = None) -> str:
    """Trace `module.forward_inference` and save it as TorchScript at `path`; returns the path.

    `example_obs` (a batch of observations) defaults to zeros shaped like the module's observation space.
    """
    if example_obs is None:
        space = getattr(module, "observation_space", None)
        if space is None or space.shape is None:
            raise ValueError(f"{type(module).__name__} has no observation_space with a shape; pass example_obs=.")
        dtype = np.float32 if np.issubdtype(space.dtype, np.floating) else space.dtype
        example_obs = torch.as_tensor(np.zeros((2, *space.shape), dtype=dtype))
    was_training = module.training
    module.eval()
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    # torch marks TorchScript deprecated in favour of torch.export, but TorchScript files are what loads
    # everywhere with plain torch.jit.load (C++ libtorch included).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            with torch.no_grad():
                traced = torch.jit.trace(_InferenceForward(module), (example_obs,), check_trace=False)
        finally:
            module.train(was_training)
        torch.jit.save(traced, path)
    return path


def native_model_writers(multi_module) -> Dict[str, Callable[[str], None]]:
    """{"native_models/<module_id>/model.pt": writer} for every sub-module (checkpoint extra files)."""
    return {f"native_models/{mid}/model.pt": (lambda p, m=multi_module[mid]: export_torchscript(m, p))
            for mid in multi_module.keys()}


def _module_or_raise(multi_module, module_id: str):
    ids = list(multi_module.keys())
    if module_id not in ids:
        from relayrl.core.suggest import did_you_mean

        raise ValueError(f"No module `{module_id}` to export; modules: {ids}.{did_you_mean(module_id, ids)}")
    return multi_module[module_id]
