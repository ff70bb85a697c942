"""Q-learning math (torch): n-step bootstrapped targets and the TD-error losses DQN and friends use."""
from typing import Optional, Union

import torch

HUBER_DELTA = 1.0


def q_learning_targets(rewards: torch.Tensor, terminateds: torch.Tensor, next_q_target: torch.Tensor, *,
                       gamma: float, n_step: Union[int, torch.Tensor],
                       next_q_online: Optional[torch.Tensor] = None) -> torch.Tensor:
    """y = r + gamma**n * (1 - terminated) * Q_target(s', a*), one per row (no gradient).

    `rewards` is the n-step discounted reward sum and `n_step` the steps it covers (an int, or one
    per row when n varies); `next_q_target`/`next_q_online` are (B, num_actions) Q-values at the
    observation n steps later. a* = argmax of the online net's Q (double Q, when given), else of
    the target net's Q (plain DQN: max_a Q_target).
    """
    with torch.no_grad():
        chooser = next_q_online if next_q_online is not None else next_q_target
        best_actions = chooser.argmax(dim=-1, keepdim=True)
        next_values = next_q_target.gather(-1, best_actions).squeeze(-1)
        return bootstrap_targets(rewards, terminateds, next_values, gamma=gamma, n_step=n_step)


def bootstrap_targets(rewards: torch.Tensor, terminateds: torch.Tensor, next_values: torch.Tensor, *,
                      gamma: float, n_step: Union[int, torch.Tensor]) -> torch.Tensor:
    """y = r + gamma**n * (1 - terminated) * V(s') (no gradient); V(s') is whatever the algorithm
    bootstraps from (DQN: Q_target at a*, SAC: min twin Q minus the entropy term)."""
    with torch.no_grad():
        if isinstance(n_step, torch.Tensor):
            base = torch.as_tensor(gamma, dtype=next_values.dtype, device=next_values.device)
            discounts = torch.pow(base, n_step.to(next_values.dtype))
        else:
            discounts = gamma ** n_step
        not_done = 1.0 - terminateds.to(next_values.dtype)
        return rewards.to(next_values.dtype) + discounts * not_done * next_values


def td_error_loss(td_errors: torch.Tensor, kind: str = "huber") -> torch.Tensor:
    """Per-row loss of the TD errors: 'huber' (quadratic within +-1, linear beyond) or 'mse' (0.5 * td**2).

    Both halve the square so they agree for small errors; Huber keeps large errors' gradients at +-1.
    """
    if kind == "huber":
        return torch.nn.functional.huber_loss(td_errors, torch.zeros_like(td_errors), reduction="none",
                                              delta=HUBER_DELTA)
    if kind == "mse":
        return 0.5 * td_errors.pow(2)
    raise ValueError(f"td_error_loss_fn must be 'huber' or 'mse', got {kind!r}.")


__all__ = ["q_learning_targets", "td_error_loss"]
