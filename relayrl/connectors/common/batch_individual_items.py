"""Default piece: turn the per-episode item lists of every column into arrays with a batch axis."""
from typing import Any, List

import numpy as np

from relayrl.connectors.connector_v2 import BatchedNdArray, ConnectorV2
from relayrl.core import pinned as _pinned  # (the module: tests fake its allocator on CPU-only torch)
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.core.pinned import worth_pinning
from relayrl.modules.multi_rl_module import MultiRLModule


def stack_items(items: List[Any], pin_memory: bool = False):
    """Stack single items (adding the batch axis) and concatenate already-batched arrays, in order.

    Nested items (dicts/tuples of arrays, e.g. Dict observations or LSTM states) are stacked per leaf.
    `pin_memory`: big numeric results are written straight into pinned memory (relayrl/core/pinned.py).
    """
    if not items:
        return np.zeros((0,), np.float32)
    first = items[0]
    if isinstance(first, dict):
        return {k: stack_items([item[k] for item in items], pin_memory) for k in first}
    if isinstance(first, tuple):
        return tuple(stack_items([item[i] for item in items], pin_memory) for i in range(len(first)))
    if not any(isinstance(item, BatchedNdArray) for item in items):
        if not isinstance(first, np.ndarray):
            return np.asarray(items)
        if pin_memory:
            return _concatenate([np.asarray(item)[None] for item in items])
        return np.asarray(np.stack(items))
    parts = [np.asarray(item) if isinstance(item, BatchedNdArray) else np.asarray(item)[None] for item in items]
    return _concatenate(parts) if pin_memory else np.concatenate(parts, axis=0)


def _concatenate(parts: List[np.ndarray]) -> np.ndarray:
    """np.concatenate along the batch axis, into pinned memory when the result is worth pinning."""
    shape = (sum(len(part) for part in parts),) + parts[0].shape[1:]
    dtype = np.result_type(*parts)
    if any(part.shape[1:] != shape[1:] for part in parts) or not worth_pinning(shape, dtype):
        return np.concatenate(parts, axis=0)  # (numpy's own error for mismatched shapes)
    return np.concatenate(parts, axis=0, out=_pinned.empty_pinned(shape, dtype))


class BatchIndividualItems(ConnectorV2):
    """Collect phase -> arrays. On a Learner (multi-module batch) the result is keyed by module ID."""

    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 pin_memory: bool = False, **kwargs):
        """`pin_memory`: the batch goes to a GPU next, so big columns are built in pinned memory (one host copy
        fewer; builders.py sets it for a Learner on CUDA)."""
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._multi_agent = multi_agent
        self._pin_memory = pin_memory

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if self._multi_agent and _is_module_keyed(batch, rl_module):  # after AgentToModuleMapping
            return {module_id: _batch_columns(module_batch, self._pin_memory)
                    for module_id, module_batch in batch.items()}
        out = _batch_columns(batch, self._pin_memory)
        if isinstance(rl_module, MultiRLModule) and not _is_module_keyed(out, rl_module):
            out = {DEFAULT_MODULE_ID: out}
        return out


def _batch_columns(batch, pin_memory: bool = False) -> dict:
    out = {}
    for column, data in batch.items():
        if column == Columns.INFOS:  # infos are arbitrary dicts: keep them as a flat list
            out[column] = _flatten(data)
        elif isinstance(data, dict) and data and isinstance(next(iter(data)), tuple):
            out[column] = stack_items(_flatten(data), pin_memory)
        elif isinstance(data, list):
            out[column] = stack_items(data, pin_memory)
        else:
            out[column] = data
    return out


def _flatten(data) -> list:
    if isinstance(data, dict):
        return [item for items in data.values() for item in items]
    return list(data)


def _is_module_keyed(batch, rl_module) -> bool:
    return bool(batch) and all(key in rl_module for key in batch)
