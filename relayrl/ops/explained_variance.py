"""Explained variance of value predictions, the `vf_explained_var` stat of PPO's Learner and PPOTorchPolicy."""
import torch


def explained_variance(targets, predictions, mask=None):
    """1 - Var(targets - predictions) / Var(targets), at least -1 (RLlib's definition), over the rows `mask`
    keeps; 0 where it is undefined (fewer than 2 rows, or targets without variance). No gradient."""
    with torch.no_grad():
        if mask is not None:
            targets, predictions = targets[mask.bool()], predictions[mask.bool()]
        if targets.numel() < 2:
            return torch.zeros((), device=targets.device)
        var_y = torch.var(targets)
        if var_y <= 0:
            return torch.zeros((), device=targets.device)
        return torch.clamp(1 - torch.var(targets - predictions) / var_y, min=-1.0)
