"""Uniformly random actions for a whole batch at once, with their log-probabilities (vectorised, torch)."""
import math
from typing import Tuple

import gymnasium as gym
import numpy as np
import torch


def module_action_bounds(space: gym.spaces.Box, normalize_actions: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """Bounds of the module's actions: normalized dims (finite low and high) act in [-1, 1]."""
    low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    if normalize_actions:
        bounded = np.isfinite(low) & np.isfinite(high)
        low, high = np.where(bounded, -1.0, low), np.where(bounded, 1.0, high)
    return torch.as_tensor(low, dtype=torch.float32), torch.as_tensor(high, dtype=torch.float32)


def random_actions(space: gym.Space, batch_shape, normalize_actions: bool = True,
                   device=None) -> Tuple[torch.Tensor, torch.Tensor]:
    """(actions, logp) of a uniform policy over `space` for `batch_shape` rows.

    Box dims bounded on both sides are uniform in their (module) bounds; the others standard normal.
    """
    batch_shape = tuple(batch_shape)
    if isinstance(space, gym.spaces.Discrete):
        n = int(space.n)
        actions = torch.randint(n, batch_shape, device=device) + int(space.start)
        return actions, torch.full(batch_shape, -math.log(n), device=device)
    if isinstance(space, gym.spaces.MultiDiscrete):
        nvec = torch.as_tensor(np.asarray(space.nvec).reshape(-1), device=device)
        uniform = torch.rand(batch_shape + tuple(nvec.shape), device=device)
        actions = (uniform * nvec).long().reshape(batch_shape + tuple(space.shape))
        return actions, torch.full(batch_shape, -float(torch.log(nvec.double()).sum()), device=device)
    if isinstance(space, gym.spaces.MultiBinary):
        shape = (space.n,) if isinstance(space.n, int) else tuple(space.n)
        actions = torch.randint(2, batch_shape + shape, device=device)
        return actions, torch.full(batch_shape, -math.log(2) * math.prod(shape), device=device)
    if isinstance(space, gym.spaces.Box):
        low, high = module_action_bounds(space, normalize_actions)
        low, high = low.to(device), high.to(device)
        bounded = torch.isfinite(low) & torch.isfinite(high)
        width = torch.where(bounded, high - low, torch.ones_like(low))
        uniform = low.where(bounded, torch.zeros_like(low)) + torch.rand(batch_shape + low.shape, device=device) * width
        normal = torch.randn(batch_shape + low.shape, device=device)
        actions = torch.where(bounded, uniform, normal)
        logp = torch.where(bounded, -torch.log(width), -0.5 * normal ** 2 - 0.5 * math.log(2 * math.pi))
        return actions, logp.reshape(batch_shape + (-1,)).sum(-1)
    raise TypeError(f"Random actions need a Discrete, MultiDiscrete, MultiBinary or Box action space, got "
                    f"{space}; override get_exploration_action() for other spaces.")

