"""Default piece (stateful modules only): add a time axis; on the Learner cut episodes into padded sequences."""
import numpy as np

from relayrl.connectors.common.batch_individual_items import stack_items
from relayrl.connectors.common.stateful import (
    is_stateful,
    is_stateless_key,
    max_seq_len,
    module_for_key,
    stateless_module_ids,
)
from relayrl.connectors.connector_v2 import BatchedNdArray, ConnectorV2, _episode_key
from relayrl.core.columns import Columns
from relayrl.core.tree import map_structure

_NO_TIME_AXIS = (Columns.STATE_IN, Columns.INFOS, Columns.SEQ_LENS)


class AddTimeDimToBatchAndZeroPad(ConnectorV2):
    """Env-to-module: every item gets a time axis of length 1 (B, 1, ...).

    Learner: each episode's items become ceil(len/max_seq_len) sequences of max_seq_len steps,
    right-zero-padded, plus a `seq_lens` column and a `loss_mask` hiding the padding.
    Multi-agent: only the items of agents whose module is stateful, each with its module's max_seq_len.
    """

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *,
                 as_learner_connector: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._as_learner_connector = as_learner_connector

    def skips(self, rl_module) -> bool:
        return not is_stateful(rl_module)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if not is_stateful(rl_module):
            return batch
        if not self._as_learner_connector:
            stateless = stateless_module_ids(rl_module)  # multi-agent: modules whose agents get no time axis
            for column, data in list(batch.items()):
                if column in _NO_TIME_AXIS:
                    continue
                if not _is_per_episode(data):  # already batched (fast path): (B, ...) -> (B, 1, ...)
                    batch[column] = map_structure(lambda x: np.expand_dims(x, 1), data)
                    continue
                if isinstance(data, dict):
                    for key, items in data.items():
                        if not (stateless and is_stateless_key(key, stateless)):
                            items[:] = [map_structure(lambda x: np.expand_dims(np.asarray(x), 0), it) for it in items]
            return batch
        # Chunks of one episode share its batch key (e.g. two fragments of it in one train batch): each
        # chunk's rows are padded on their own, so no sequence runs from one chunk into the next.
        chunk_lengths = {}
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            if len(episode):  # an empty chunk adds no rows
                chunk_lengths.setdefault(_episode_key(episode), []).append(len(episode))
        seq_lens_added = Columns.SEQ_LENS in batch
        needs_mask = Columns.LOSS_MASK not in batch
        pad_masks = {}
        for column, data in list(batch.items()):
            if column in _NO_TIME_AXIS or not isinstance(data, dict):
                continue
            for key, items in data.items():
                module = module_for_key(rl_module, key)
                if not module.is_stateful():
                    continue
                stacked = stack_items(items)
                padded, lens = _pad_chunks(stacked, chunk_lengths.get(key), max_seq_len(module))
                data[key] = [map_structure(lambda x: x.view(BatchedNdArray), padded)]
                if not seq_lens_added:
                    batch.setdefault(Columns.SEQ_LENS, {})[key] = [lens.view(BatchedNdArray)]
                    if needs_mask:
                        mask = np.arange(max_seq_len(module))[None, :] < lens[:, None]
                        pad_masks[key] = [mask.view(BatchedNdArray)]
            seq_lens_added = True
        if needs_mask and pad_masks:
            batch[Columns.LOSS_MASK] = pad_masks
        return batch


def _is_per_episode(data) -> bool:
    return isinstance(data, list) or (isinstance(data, dict) and bool(data) and isinstance(next(iter(data)), tuple))


def _pad_chunks(array, lengths, seq_len: int):
    """Each chunk's rows (`lengths`, in batch order) padded into sequences; one chunk if the rows do not add up."""
    leaf = array
    while isinstance(leaf, dict):  # nested columns (e.g. a separate critic's state: {"actor": {"h", ...}})
        leaf = next(iter(leaf.values()))
    rows = len(leaf)
    if not lengths or len(lengths) == 1 or sum(lengths) != rows:
        return _pad_into_sequences(array, seq_len)
    parts, start = [], 0
    for length in lengths:
        parts.append(_pad_into_sequences(map_structure(lambda x: x[start:start + length], array), seq_len))
        start += length
    padded = map_structure(lambda *xs: np.concatenate(xs), *[p[0] for p in parts])
    return padded, np.concatenate([p[1] for p in parts])


def _pad_into_sequences(array, seq_len: int):
    if isinstance(array, dict):
        parts = {k: _pad_into_sequences(v, seq_len) for k, v in array.items()}
        return {k: p[0] for k, p in parts.items()}, next(iter(parts.values()))[1]
    n = len(array)
    n_seq = max(1, -(-n // seq_len))
    padded = np.zeros((n_seq * seq_len,) + array.shape[1:], dtype=array.dtype)
    padded[:n] = array
    lens = np.full(n_seq, seq_len, dtype=np.int32)
    lens[-1] = n - (n_seq - 1) * seq_len
    return padded.reshape((n_seq, seq_len) + array.shape[1:]), lens
