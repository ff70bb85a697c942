"""Which rows of a module's train batch count: those whose `loss_mask` is True (all rows when there is none).
PPO's bootstrap steps and a stateful module's padding carry a False mask; losses and step counts skip them."""
from typing import Any, Dict

import torch

from relayrl.core.columns import Columns
from relayrl.learner.minibatches import batch_size_of


def num_real_steps(module_batch: Dict[str, Any]) -> int:
    """Rows that enter the loss: `loss_mask` rows if there is a mask (not e.g. PPO's bootstrap steps)."""
    mask = module_batch.get(Columns.LOSS_MASK)
    if isinstance(mask, torch.Tensor):
        return int(mask.sum())
    return batch_size_of(module_batch)


def possibly_masked_mean(batch: Dict[str, Any]):
    """mean() over rows whose `loss_mask` is True (all rows when the batch has no mask)."""
    mask = batch.get(Columns.LOSS_MASK)
    if mask is None:
        return torch.mean
    masked_out = ~mask.bool()
    count = (~masked_out).sum().clamp(min=1)
    # masked_fill, not t * mask: masked rows may hold inf/NaN (e.g. a ratio on an artificial step),
    # and 0 * inf = NaN. One kernel per call: this runs several times per minibatch.
    return lambda t: t.masked_fill(masked_out, 0.0).sum() / count


__all__ = ["num_real_steps", "possibly_masked_mean"]
