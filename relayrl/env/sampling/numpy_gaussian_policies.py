"""Numpy policies for Box actions: the default PPO module's diagonal Gaussian and SAC's tanh-squashed one.

Each computes what `GetActions` computes on the torch path from the same `action_dist_inputs` ([means,
log-stds] on the last axis): explore=True a float32 sample and its log-prob with the torch distribution's
formulas (the log-prob of the sampled *action*, as GetActions records it; the squashed one in float64, see
there); explore=False
the deterministic action (the mean, or tanh of it for SAC) and log-prob 0, as `TorchDeterministic`.
The noise is the runner's numpy Generator's, not torch's: a seeded run repeats, with another stream
than the torch path.
"""
import math

import numpy as np

from relayrl.core.columns import Columns
from relayrl.env.sampling.numpy_actions import NumpyPolicy
from relayrl.modules.distributions import TorchDiagGaussian
from relayrl.modules.squashed_gaussian import LOG_STD_MAX, LOG_STD_MIN, TanhSquashedGaussian

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_2 = math.log(2.0)
_EPS32 = float(np.finfo(np.float32).eps)
_LOW, _HIGH = -1.0 + _EPS32, 1.0 - _EPS32  # TanhSquashedGaussian.logp's clamp of float32 actions


class NumpyDiagGaussianPolicy(NumpyPolicy):
    """TorchDiagGaussian in numpy: mean + std * N(0, 1), log-std clamped to +-20 as the distribution does."""

    DISTRIBUTION = TorchDiagGaussian
    LOG_STD_RANGE = (-20.0, 20.0)  # TorchDiagGaussian's default log_std_clip

    def act(self, action_dist_inputs: np.ndarray, explore: bool) -> dict:
        # Slices and ufuncs, not np.split / np.clip: their Python wrappers cost more than the arithmetic on a few rows.
        n = action_dist_inputs.shape[-1] // 2
        mean = action_dist_inputs[:, :n]
        if not explore:
            return self._columns(action_dist_inputs, self.squash(mean.copy()), np.zeros(len(mean), np.float32))
        low, high = self.LOG_STD_RANGE
        log_std = np.minimum(np.maximum(action_dist_inputs[:, n:], low), high)  # torch's clamp (NaN stays NaN)
        std = np.exp(log_std)
        actions = self._rng.standard_normal(mean.shape, dtype=np.float32)
        actions *= std
        actions += mean
        actions = self.squash(actions)
        return self._columns(action_dist_inputs, actions, self.logp(actions, mean, log_std, std))

    @staticmethod
    def squash(pre_actions: np.ndarray) -> np.ndarray:
        return pre_actions

    @staticmethod
    def logp(actions, mean, log_std, std) -> np.ndarray:
        """Sum over action dims of the Gaussian log-density (TorchDiagGaussian.logp's formula)."""
        normal = -0.5 * ((actions - mean) / std) ** 2 - log_std - np.float32(_HALF_LOG_2PI)
        return normal.sum(-1, dtype=np.float32)

    @staticmethod
    def _columns(action_dist_inputs, actions, logp) -> dict:
        return {Columns.ACTION_DIST_INPUTS: action_dist_inputs, Columns.ACTIONS: actions, Columns.ACTION_LOGP: logp}


class NumpySquashedGaussianPolicy(NumpyDiagGaussianPolicy):
    """TanhSquashedGaussian in numpy: tanh of the Gaussian sample; log-std clamped to [-20, 2]; the log-prob
    of the action clamped just inside (-1, 1) and mapped back by atanh, with the tanh correction, as
    TanhSquashedGaussian.logp (so a sample that rounds to +-1 gets the same finite log-prob), in float64."""

    DISTRIBUTION = TanhSquashedGaussian
    LOG_STD_RANGE = (LOG_STD_MIN, LOG_STD_MAX)

    @staticmethod
    def squash(pre_actions: np.ndarray) -> np.ndarray:
        return np.tanh(pre_actions, out=pre_actions)

    @staticmethod
    def logp(actions, mean, log_std, std) -> np.ndarray:
        # In float64: near +-1 atanh turns one float32 rounding of the action into a large change of the
        # log-prob (torch's float32 result carries that error); this is the recorded action's log-prob.
        pre_tanh = np.arctanh(np.minimum(np.maximum(actions, _LOW), _HIGH, dtype=np.float64))
        z = pre_tanh - mean
        z /= std
        # The tanh correction -log(1 - tanh(u)^2) = 2 * (u + softplus(-2u) - log 2), finite for large |u|
        # (squashed_gaussian.py); the Gaussian part -z^2 / 2 - log_std - log(2 pi) / 2; constants folded.
        u_plus_softplus = np.logaddexp(0.0, -2.0 * pre_tanh)
        u_plus_softplus += pre_tanh
        logp = -0.5 * z * z - log_std + (2.0 * u_plus_softplus - (_HALF_LOG_2PI + 2.0 * _LOG_2))
        return logp.sum(-1).astype(np.float32)
