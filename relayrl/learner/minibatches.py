"""Minibatch iteration over a module-keyed train batch: whole-tensor indexing, no per-sample Python."""
from typing import Any, Dict, Iterator, Optional

import torch

from relayrl.core.columns import Columns

_UNSLICED = (Columns.INFOS,)


def batch_size_of(module_batch: Dict[str, Any]) -> int:
    """Rows of a module's batch (sequences count max_seq_len steps each for recurrent batches)."""
    for key, value in module_batch.items():
        if isinstance(value, torch.Tensor) and key not in (Columns.SEQ_LENS, Columns.STATE_IN):
            return int(value.shape[0] * (value.shape[1] if Columns.SEQ_LENS in module_batch else 1))
    return 0


def timesteps_of(module_batch: Dict[str, Any]) -> int:
    """Timesteps of a module's batch that the loss counts: a recurrent batch's padding and the steps its loss mask
    leaves out (e.g. MARWIL's added bootstrap steps) do not count."""
    seq_lens = module_batch.get(Columns.SEQ_LENS)
    if not isinstance(seq_lens, torch.Tensor):
        return batch_size_of(module_batch)
    mask = module_batch.get(Columns.LOSS_MASK)
    return int(mask.sum()) if isinstance(mask, torch.Tensor) else int(seq_lens.sum())


def _rows(module_batch: Dict[str, Any]) -> int:
    if Columns.SEQ_LENS in module_batch:
        return int(module_batch[Columns.SEQ_LENS].shape[0])
    return batch_size_of(module_batch)


def take_rows(value, idx, on_device: Optional[dict] = None):
    """Rows `idx` (CPU indices, e.g. a permutation: the same shuffles on every device) of a column; `on_device`
    caches the indices copied to each device the columns live on (one copy per device, not per column)."""
    if on_device is None:
        on_device = {}
    if isinstance(value, dict):
        return {k: take_rows(v, idx, on_device) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            if value.device not in on_device:
                on_device[value.device] = idx.to(value.device, non_blocking=True)
            idx = on_device[value.device]
        # index_select, not value[idx]: the same rows, ~13x faster for image rows on the CPU (7.3 -> 0.55 ms
        # for 256 of 1,024 84x84x4 uint8 frames), faster for small columns too.
        return torch.index_select(value, 0, idx)
    if isinstance(value, tuple):  # (Tuple observations)
        return tuple(take_rows(v, idx, on_device) for v in value)
    return value


def _rows_slice(value, start: int, stop: int):
    if isinstance(value, dict):
        return {k: _rows_slice(v, start, stop) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value[start:stop]  # a view: no copy per minibatch
    if isinstance(value, tuple):
        return tuple(_rows_slice(v, start, stop) for v in value)
    return value


def drop_rows_outside_loss(module_batch: Dict[str, Any]) -> Dict[str, Any]:
    """The rows whose `loss_mask` is True, without the mask column (non-recurrent batches).

    Rows outside the loss (e.g. PPO's bootstrap steps, there only for GAE) would otherwise fill
    minibatches and cost masked means in every loss term. Recurrent batches keep their padding
    masks: their sequences must stay whole.
    """
    mask = module_batch.get(Columns.LOSS_MASK)
    if not isinstance(mask, torch.Tensor) or mask.dim() != 1 or Columns.SEQ_LENS in module_batch:
        return module_batch
    keep = mask.bool()
    rows = keep.nonzero().reshape(-1)  # one device sync here, not one per column (boolean indexing syncs)
    out = {}
    for key, value in module_batch.items():
        if key == Columns.LOSS_MASK:
            continue
        if key in _UNSLICED and isinstance(value, list) and len(value) == len(keep):
            value = [item for item, kept in zip(value, keep.tolist()) if kept]
        elif key not in _UNSLICED:
            value = take_rows(value, rows, {rows.device: rows})
        out[key] = value
    return out


def iterate_minibatches(batch: Dict[str, Dict[str, Any]], *, num_epochs: int, minibatch_size: Optional[int],
                        shuffle: bool) -> Iterator[Dict[str, Dict[str, Any]]]:
    """`num_epochs` passes; each yields len // minibatch_size minibatches (rows dropped by flooring vary per
    epoch when shuffling). Recurrent batches are split by sequence, keeping sequences whole.

    Each epoch gathers every column once in shuffled order; minibatches are then contiguous views,
    so a minibatch costs no copies (the same rows as indexing with the permutation's slices).
    """
    # One minibatch of every row (off-policy and offline updates): the batch itself. A recurrent batch counts its
    # timesteps, not its padded slots, which may outnumber minibatch_size: flooring to whole sequences dropped
    # sequences the batch was read for (BC on 64 timesteps of episodes trained ~55).
    if num_epochs == 1 and not shuffle and all(
            not minibatch_size or minibatch_size >= timesteps_of(module_batch) for module_batch in batch.values()):
        yield batch
        return
    for _ in range(num_epochs):
        epoch, sizes = {}, {}
        for module_id, module_batch in batch.items():
            n = _rows(module_batch)
            steps_per_row = max(1, batch_size_of(module_batch) // max(n, 1))
            size = n if not minibatch_size else max(1, min(n, minibatch_size // steps_per_row))
            if shuffle:
                order, on_device = torch.randperm(n), {}
                module_batch = {k: (v if k in _UNSLICED else take_rows(v, order, on_device))
                                for k, v in module_batch.items()}
            epoch[module_id] = module_batch
            sizes[module_id] = (n, size, max(1, n // size))
        num_minibatches = max(count for _, _, count in sizes.values())
        for i in range(num_minibatches):
            minibatch = {}
            for module_id, module_batch in epoch.items():
                n, size, count = sizes[module_id]
                start = (i % count) * size
                stop = start + size if n >= size else n
                minibatch[module_id] = {k: (v if k in _UNSLICED else _rows_slice(v, start, stop))
                                        for k, v in module_batch.items()}
            yield minibatch
