"""Which rows of a train batch each of `num_learners` data-parallel Learners trains on.

Every Learner gets the whole batch and keeps its shard, so the shards add up to exactly the
minibatches one Learner would use: global minibatch i (rows [i*m, (i+1)*m) of the batch, m =
minibatch_size) is split into `num_learners` equal parts, and Learner k's minibatch i is part k.
DDP averages the Learners' gradients, so (with equal parts and a mean loss) every step equals the
single-Learner step on the whole minibatch. All shards have the same number of rows, so every
Learner runs the same number of steps (DDP's all-reduces would otherwise wait forever).
"""
from typing import Any, Dict, Optional, Tuple

import torch

from relayrl.core.columns import Columns
from relayrl.learner.minibatches import batch_size_of, take_rows

_UNSLICED = (Columns.INFOS,)


def per_learner_minibatch_size(minibatch_size: Optional[int], num_learners: int) -> Optional[int]:
    """Timesteps per minibatch on each Learner (None: each Learner's whole shard is one minibatch)."""
    if not minibatch_size:
        return None
    if minibatch_size % num_learners:
        raise ValueError(
            f"minibatch_size ({minibatch_size}) must be a multiple of num_learners ({num_learners}): each "
            f"Learner trains on minibatch_size / num_learners rows per step. Set minibatch_size to e.g. "
            f"{max(num_learners, minibatch_size - minibatch_size % num_learners)}.")
    return minibatch_size // num_learners


def shard_row_indices(num_rows: int, rank: int, num_learners: int, rows_per_minibatch: Optional[int]) -> torch.Tensor:
    """Row indices of Learner `rank`'s shard; `rows_per_minibatch` is its minibatch (None: whole shard).

    The last num_rows % num_learners rows are dropped so that all shards are equally long.
    """
    used = num_rows - num_rows % num_learners
    per_learner = used // num_learners
    if per_learner == 0:
        raise ValueError(f"A train batch of {num_rows} rows cannot be split over num_learners={num_learners} "
                         "Learners: raise train_batch_size_per_learner or lower num_learners.")
    part = per_learner if rows_per_minibatch is None else max(1, min(per_learner, rows_per_minibatch))
    block = part * num_learners  # one global minibatch
    full = (used // block) * block
    head = torch.arange(full).view(-1, num_learners, part)[:, rank].reshape(-1)
    tail = torch.arange(full, used).view(num_learners, -1)[rank]  # rows no whole minibatch covers
    return torch.cat([head, tail])


def shard_batch(batch: Dict[str, Dict[str, Any]], rank: int, num_learners: int,
                minibatch_size: Optional[int]) -> Tuple[Dict[str, Dict[str, Any]], Optional[int]]:
    """(Learner `rank`'s part of a module-keyed tensor batch, its minibatch size in timesteps)."""
    learner_minibatch = per_learner_minibatch_size(minibatch_size, num_learners)
    shard = {}
    for module_id, module_batch in batch.items():
        recurrent = Columns.SEQ_LENS in module_batch
        rows = int(module_batch[Columns.SEQ_LENS].shape[0]) if recurrent else batch_size_of(module_batch)
        steps_per_row = max(1, batch_size_of(module_batch) // max(rows, 1))
        rows_per_minibatch = None if learner_minibatch is None else learner_minibatch // steps_per_row
        idx = shard_row_indices(rows, rank, num_learners, rows_per_minibatch)
        shard[module_id] = {k: (v if k in _UNSLICED else take_rows(v, idx)) for k, v in module_batch.items()}
    return shard, learner_minibatch

