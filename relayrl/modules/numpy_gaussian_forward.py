"""`NumpyGaussianInputs`: the default PPO module's Box `action_dist_inputs` ([means, log-stds]) in numpy.

The pi head's MLP gives the means and log-stds side by side, or (free_log_std) the means only, the
log-stds being one parameter for all rows; either way the module clamps the log-stds to
+-`log_std_clip_param` before the distribution sees them. The log-std parameter is read through a
view, like NumpyMLP's weights, so weight syncs (in-place copies) are seen at once.
"""
from typing import Optional

import numpy as np

from relayrl.modules.numpy_forward import NumpyMLP, _plain_cpu_float32


class NumpyGaussianInputs:
    """`forward(observations)` -> [mean, clamped log_std] (B, 2 * action dims), float32."""

    def __init__(self, mlp: NumpyMLP, log_std: Optional[np.ndarray], log_std_clip: Optional[float]):
        self.mlp = mlp
        self.log_std = log_std  # free_log_std's parameter (a view), or None: the MLP outputs the log-stds
        self.log_std_clip = None if log_std_clip is None or log_std_clip == float("inf") else float(log_std_clip)
        self.input_width = mlp.input_width

    @classmethod
    def build(cls, mlp: Optional[NumpyMLP], log_std_parameter=None,
              log_std_clip: Optional[float] = None) -> Optional["NumpyGaussianInputs"]:
        """None where the MLP is None or the log-std parameter is not a plain CPU float32 tensor."""
        if mlp is None:
            return None
        log_std = None
        if log_std_parameter is not None:
            if not _plain_cpu_float32(log_std_parameter) or log_std_parameter.dim() != 1:
                return None
            log_std = log_std_parameter.detach().numpy()
        return cls(mlp, log_std, log_std_clip)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        out = self.mlp(observations)  # a fresh array: clamped in place below
        if self.log_std is not None:
            out = np.concatenate([out, np.broadcast_to(self.log_std, out.shape)], axis=-1)
        if self.log_std_clip is not None:
            log_std = out[:, out.shape[1] // 2:]
            np.clip(log_std, -self.log_std_clip, self.log_std_clip, out=log_std)
        return out


__all__ = ["NumpyGaussianInputs"]
