"""Action distributions over a model's outputs (RLlib's `models/torch/torch_action_dist.py`).

`dist_class(inputs, model)`; `sample()`, `deterministic_sample()`, `logp(actions)`, `sampled_action_logp()`,
`entropy()`, `kl(other)`. Written with plain tensor ops (no torch.distributions objects): sampling runs
once per env step.
"""
import gymnasium as gym
import numpy as np
import torch


class TorchDistributionWrapper:
    def __init__(self, inputs, model=None):
        self.inputs = torch.as_tensor(inputs)
        self.model = model
        self.last_sample = None

    def sampled_action_logp(self):
        return self.logp(self.last_sample)

    @staticmethod
    def required_model_output_shape(action_space, model_config) -> int:
        raise NotImplementedError


class TorchCategorical(TorchDistributionWrapper):
    """Discrete actions from logits."""

    def __init__(self, inputs, model=None, temperature: float = 1.0):
        super().__init__(inputs, model)
        self.log_probs = torch.log_softmax(self.inputs / temperature, dim=-1)

    def sample(self):
        self.last_sample = torch.multinomial(self.log_probs.exp(), 1).squeeze(-1)
        return self.last_sample

    def deterministic_sample(self):
        self.last_sample = self.log_probs.argmax(dim=-1)
        return self.last_sample

    def logp(self, actions):
        return self.log_probs.gather(-1, torch.as_tensor(actions).long().unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        return -(self.log_probs.exp() * self.log_probs).sum(-1)

    def kl(self, other):
        return (self.log_probs.exp() * (self.log_probs - other.log_probs)).sum(-1)

    @staticmethod
    def required_model_output_shape(action_space, model_config) -> int:
        return int(action_space.n)


class TorchDiagGaussian(TorchDistributionWrapper):
    """Box actions: the inputs are [mean, log_std] halves."""

    def __init__(self, inputs, model=None):
        super().__init__(inputs, model)
        self.mean, self.log_std = torch.chunk(self.inputs, 2, dim=-1)
        self.std = self.log_std.exp()

    def sample(self):
        self.last_sample = self.mean + self.std * torch.randn_like(self.mean)
        return self.last_sample

    def deterministic_sample(self):
        self.last_sample = self.mean
        return self.last_sample

    def logp(self, actions):
        actions = torch.as_tensor(actions, dtype=self.mean.dtype)
        z = (actions - self.mean) / self.std
        return (-0.5 * z.pow(2) - self.log_std - 0.5 * np.log(2 * np.pi)).sum(-1)

    def entropy(self):
        return (self.log_std + 0.5 * np.log(2 * np.pi * np.e)).sum(-1)

    def kl(self, other):
        return (other.log_std - self.log_std + (self.std.pow(2) + (self.mean - other.mean).pow(2))
                / (2.0 * other.std.pow(2)) - 0.5).sum(-1)

    @staticmethod
    def required_model_output_shape(action_space, model_config) -> int:
        return int(np.prod(action_space.shape)) * 2


def default_dist_class(action_space: gym.Space):
    if isinstance(action_space, gym.spaces.Discrete):
        return TorchCategorical
    if isinstance(action_space, gym.spaces.Box):
        return TorchDiagGaussian
    raise ValueError(f"No default action distribution for {action_space}: the Policy API's default models "
                     "handle Discrete and Box actions; for others, pass make_model / action_distribution_fn.")


__all__ = ["TorchCategorical", "TorchDiagGaussian", "TorchDistributionWrapper", "default_dist_class"]
