"""Action distributions built from a module's `action_dist_inputs` (RLlib's TorchDistribution API).

Written with plain tensor math instead of torch.distributions: no argument validation and no
object graph per call, which matters in the sampling loop where one is built every env step.
"""
import math

import torch


class Distribution:
    """Base class: `from_logits(logits)` builds one; `sample`, `logp`, `entropy`, `kl`."""

    @classmethod
    def from_logits(cls, logits, **kwargs):
        return cls(logits, **kwargs)

    @classmethod
    def required_input_dim(cls, space) -> int:
        raise NotImplementedError

    def sample(self):
        raise NotImplementedError

    def rsample(self):
        raise NotImplementedError

    def deterministic_sample(self):
        raise NotImplementedError

    def logp(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def kl(self, other):
        raise NotImplementedError

    def to_deterministic(self) -> "Distribution":
        return TorchDeterministic(self.deterministic_sample())


class TorchCategorical(Distribution):
    """Categorical over the last axis of `logits`."""

    def __init__(self, logits):
        self._raw_logits = logits
        self._log_probs = None

    @property
    def logits(self):
        """Normalised log-probabilities (computed on first use: sampling does not need them)."""
        if self._log_probs is None:
            self._log_probs = torch.log_softmax(self._raw_logits, dim=-1)
        return self._log_probs

    @classmethod
    def required_input_dim(cls, space) -> int:
        return int(space.n)

    def sample(self):
        # Gumbel-max with Gumbel noise -log(E), E ~ Exp(1): four small kernels, no softmax/cumsum.
        noise = torch.empty_like(self._raw_logits).exponential_().log_()
        return torch.argmax(self._raw_logits - noise, dim=-1)

    def deterministic_sample(self):
        return torch.argmax(self._raw_logits, dim=-1)

    def logp(self, value):
        index = value if value.dtype is torch.int64 else value.long()  # sampled actions are int64 already
        return self.logits.gather(-1, index.unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        probs = self.logits.exp()
        return -(probs * self.logits).sum(-1)

    def kl(self, other: "TorchCategorical"):
        probs = self.logits.exp()
        return (probs * (self.logits - other.logits)).sum(-1)


class TorchMultiCategorical(Distribution):
    """Independent categoricals over consecutive slices of `logits` (sizes `input_lens`): MultiDiscrete actions, or
    a Tuple of Discrete ones. Actions are int64 of shape (..., len(input_lens)); log-probs, entropies and KLs sum
    over the components. `TorchMultiCategorical.for_sizes([2, 3])` is the class for one space."""

    INPUT_LENS: tuple = ()

    def __init__(self, logits, input_lens=None):
        lens = list(input_lens or self.INPUT_LENS)
        if not lens or sum(lens) != logits.shape[-1]:
            raise ValueError(f"TorchMultiCategorical: input_lens {lens} must sum to the logits' size "
                             f"{logits.shape[-1]}.")
        self._parts = [TorchCategorical(part) for part in torch.split(logits, lens, dim=-1)]

    @classmethod
    def for_sizes(cls, sizes) -> type:
        return type(cls.__name__, (cls,), {"INPUT_LENS": tuple(int(n) for n in sizes)})

    @classmethod
    def required_input_dim(cls, space) -> int:
        return sum(cls.INPUT_LENS)

    def sample(self):
        return torch.stack([part.sample() for part in self._parts], dim=-1)

    def deterministic_sample(self):
        return torch.stack([part.deterministic_sample() for part in self._parts], dim=-1)

    def logp(self, value):
        return sum(part.logp(value[..., i]) for i, part in enumerate(self._parts))

    def entropy(self):
        return sum(part.entropy() for part in self._parts)

    def kl(self, other: "TorchMultiCategorical"):
        return sum(part.kl(other_part) for part, other_part in zip(self._parts, other._parts))


class TorchDiagGaussian(Distribution):
    """Diagonal Gaussian; `logits` holds means and log-stds concatenated on the last axis."""

    def __init__(self, logits, log_std_clip: float = 20.0):
        self.mean, log_std = torch.chunk(logits, 2, dim=-1)
        self.log_std = log_std.clamp(-log_std_clip, log_std_clip)
        self.std = self.log_std.exp()

    @classmethod
    def required_input_dim(cls, space) -> int:
        return 2 * int(math.prod(space.shape))

    def sample(self):
        with torch.no_grad():
            return self.rsample()

    def rsample(self):
        return self.mean + self.std * torch.randn_like(self.mean)

    def deterministic_sample(self):
        return self.mean

    def logp(self, value):
        var_term = ((value - self.mean) / self.std) ** 2
        return (-0.5 * var_term - self.log_std - 0.5 * math.log(2 * math.pi)).sum(-1)

    def entropy(self):
        return (self.log_std + 0.5 * math.log(2 * math.pi * math.e)).sum(-1)

    def kl(self, other: "TorchDiagGaussian"):
        var_ratio = (self.std / other.std) ** 2
        t1 = ((self.mean - other.mean) / other.std) ** 2
        return (0.5 * (var_ratio + t1 - 1.0) - torch.log(self.std / other.std)).sum(-1)


class TorchSquashedGaussian(TorchDiagGaussian):
    """tanh-squashed Gaussian in [-1, 1] (used by SAC)."""

    def sample(self):
        with torch.no_grad():
            return self.rsample()

    def rsample(self):
        return torch.tanh(super().rsample())

    def deterministic_sample(self):
        return torch.tanh(self.mean)

    def logp(self, value):
        value = value.clamp(-1 + 1e-6, 1 - 1e-6)
        pre_tanh = torch.atanh(value)
        return super().logp(pre_tanh) - torch.log(1 - value.pow(2) + 1e-6).sum(-1)

    def entropy(self):
        raise NotImplementedError("The squashed Gaussian has no closed-form entropy; estimate it from samples.")


class TorchDeterministic(Distribution):
    """A point mass: sampling returns the inputs."""

    def __init__(self, loc):
        self.loc = loc

    @classmethod
    def required_input_dim(cls, space) -> int:
        return int(math.prod(space.shape))

    def sample(self):
        return self.loc

    rsample = sample
    deterministic_sample = sample

    def logp(self, value):
        return torch.zeros(value.shape[:-1] if value.dim() > 1 else value.shape, device=value.device)

    def entropy(self):
        return torch.zeros(self.loc.shape[:-1], device=self.loc.device)

    def kl(self, other):
        return torch.zeros(self.loc.shape[:-1], device=self.loc.device)


__all__ = [
    "Distribution",
    "TorchCategorical",
    "TorchMultiCategorical",
    "TorchDiagGaussian",
    "TorchSquashedGaussian",
    "TorchDeterministic",
]
