"""`TanhSquashedGaussian`: a diagonal Gaussian squashed by tanh into [-1, 1] (SAC's Box policy).

The log-prob needs the change-of-variables term log(1 - tanh(u)^2). Written as
2 * (log 2 - u - softplus(-2u)) it stays finite for large |u|, where 1 - tanh(u)^2 rounds to 0
in float32. SAC samples with `rsample_with_logp()`, which keeps the pre-tanh sample u, so it never
has to invert tanh; `logp(actions)` (e.g. for actions stored in episodes) inverts it with atanh
on actions clamped just inside (-1, 1).
"""
import math

import torch
import torch.nn.functional as F

from relayrl.modules.distributions import Distribution

# SAC's usual log-std range: below -20 the policy is a point mass, above 2 it is nearly uniform after tanh.
LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_2 = math.log(2.0)


def tanh_log_det_jacobian(pre_tanh):
    """log(1 - tanh(u)^2) per element, computed stably: 2 * (log 2 - u - softplus(-2u))."""
    return 2.0 * (_LOG_2 - pre_tanh - F.softplus(-2.0 * pre_tanh))


class TanhSquashedGaussian(Distribution):
    """tanh(N(mean, std)) per action dimension; `logits` holds means and log-stds concatenated."""

    def __init__(self, logits):
        self.mean, log_std = torch.chunk(logits, 2, dim=-1)
        self.log_std = log_std.clamp(LOG_STD_MIN, LOG_STD_MAX)
        self.std = self.log_std.exp()

    @classmethod
    def required_input_dim(cls, space) -> int:
        return 2 * int(math.prod(space.shape))

    def _logp_pre_tanh(self, pre_tanh):
        normal = -0.5 * ((pre_tanh - self.mean) / self.std) ** 2 - self.log_std - _HALF_LOG_2PI
        return (normal - tanh_log_det_jacobian(pre_tanh)).sum(-1)

    def rsample_with_logp(self):
        """A reparameterised action in (-1, 1) and its log-prob (gradients flow through both)."""
        pre_tanh = self.mean + self.std * torch.randn_like(self.mean)
        return torch.tanh(pre_tanh), self._logp_pre_tanh(pre_tanh)

    def rsample(self):
        return torch.tanh(self.mean + self.std * torch.randn_like(self.mean))

    def sample(self):
        with torch.no_grad():
            return self.rsample()

    def deterministic_sample(self):
        return torch.tanh(self.mean)

    def logp(self, value):
        eps = torch.finfo(value.dtype).eps if value.is_floating_point() else 1e-6
        value = value.clamp(-1.0 + eps, 1.0 - eps)
        return self._logp_pre_tanh(torch.atanh(value))

    def entropy(self):
        raise NotImplementedError("tanh(Gaussian) has no closed-form entropy; estimate it as -logp of samples "
                                  "(rsample_with_logp()).")

    def kl(self, other):
        raise NotImplementedError("tanh(Gaussian) has no closed-form KL divergence.")


__all__ = ["TanhSquashedGaussian", "tanh_log_det_jacobian", "LOG_STD_MIN", "LOG_STD_MAX"]
