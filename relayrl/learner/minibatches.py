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


def _rows(module_batch: Dict[str, Any]) -> int:
    if Columns.SEQ_LENS in module_batch:
        return int(module_batch[Columns.SEQ_LENS].shape[0])
    return batch_size_of(module_batch)


def _take(value, idx):
    if isinstance(value, dict):
        return {k: _take(v, idx) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value[idx]
    return value


def iterate_minibatches(batch: Dict[str, Dict[str, Any]], *, num_epochs: int, minibatch_size: Optional[int],
                        shuffle: bool) -> Iterator[Dict[str, Dict[str, Any]]]:
    """`num_epochs` passes; each yields len // minibatch_size minibatches (rows dropped by flooring vary per
    epoch when shuffling). Recurrent batches are split by sequence, keeping sequences whole."""
    for _ in range(num_epochs):
        per_module = {}
        for module_id, module_batch in batch.items():
            n = _rows(module_batch)
            steps_per_row = max(1, batch_size_of(module_batch) // max(n, 1))
            size = n if not minibatch_size else max(1, min(n, minibatch_size // steps_per_row))
            order = torch.randperm(n) if shuffle else torch.arange(n)
            per_module[module_id] = [order[i:i + size] for i in range(0, n - size + 1, size)] or [order]
        num_minibatches = max(len(v) for v in per_module.values())
        for i in range(num_minibatches):
            minibatch = {}
            for module_id, module_batch in batch.items():
                idxs = per_module[module_id]
                rows = idxs[i % len(idxs)]
                minibatch[module_id] = {k: (v if k in _UNSLICED else _take(v, rows)) for k, v in module_batch.items()}
            yield minibatch
