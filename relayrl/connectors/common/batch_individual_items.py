"""Default piece: turn the per-episode item lists of every column into arrays with a batch axis."""
from typing import Any, List

import numpy as np

from relayrl.connectors.connector_v2 import BatchedNdArray, ConnectorV2
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.modules.multi_rl_module import MultiRLModule


def stack_items(items: List[Any]):
    """Stack single items (adding the batch axis) and concatenate already-batched arrays, in order.

    Nested items (dicts/tuples of arrays, e.g. Dict observations or LSTM states) are stacked per leaf.
    """
    if not items:
        return np.zeros((0,), np.float32)
    first = items[0]
    if isinstance(first, dict):
        return {k: stack_items([item[k] for item in items]) for k in first}
    if isinstance(first, tuple):
        return tuple(stack_items([item[i] for item in items]) for i in range(len(first)))
    if not any(isinstance(item, BatchedNdArray) for item in items):
        return np.asarray(np.stack(items)) if isinstance(first, np.ndarray) else np.asarray(items)
    parts = [np.asarray(item) if isinstance(item, BatchedNdArray) else np.asarray(item)[None] for item in items]
    return np.concatenate(parts, axis=0)


class BatchIndividualItems(ConnectorV2):
    """Collect phase -> arrays. On a Learner (multi-module batch) the result is keyed by module ID."""

    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._multi_agent = multi_agent

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if self._multi_agent and _is_module_keyed(batch, rl_module):  # after AgentToModuleMapping
            return {module_id: _batch_columns(module_batch) for module_id, module_batch in batch.items()}
        out = _batch_columns(batch)
        if isinstance(rl_module, MultiRLModule) and not _is_module_keyed(out, rl_module):
            out = {DEFAULT_MODULE_ID: out}
        return out


def _batch_columns(batch) -> dict:
    out = {}
    for column, data in batch.items():
        if column == Columns.INFOS:  # infos are arbitrary dicts: keep them as a flat list
            out[column] = _flatten(data)
        elif isinstance(data, dict) and data and isinstance(next(iter(data)), tuple):
            out[column] = stack_items(_flatten(data))
        elif isinstance(data, list):
            out[column] = stack_items(data)
        else:
            out[column] = data
    return out


def _flatten(data) -> list:
    if isinstance(data, dict):
        return [item for items in data.values() for item in items]
    return list(data)


def _is_module_keyed(batch, rl_module) -> bool:
    return bool(batch) and all(key in rl_module for key in batch)
