"""Cutting a train batch into sequences for recurrent models (RLlib's `policy/rnn_sequencing.py`).

A sequence is at most `max_seq_len` consecutive rows of one trajectory (one episode of one agent, or one cut
piece of it: a change of `eps_id`, `unroll_id` or `agent_index` starts a new one). Its recurrent state is
the `state_in_*` of its first row, the state the sampler used there (zeros at an episode's start).

- `add_seq_lens(batch, max_seq_len)`: what a TorchPolicy trains a sequence model on. The rows stay as they
  are (no padding, same order); `seq_lens` [B] and `state_in_*` [B] (one per sequence) are added. Models pad
  inside their forward pass and hand back one output per row, so a loss's `torch.mean` over rows counts
  every real step once and no padding (the seed's PG loss needs no mask).
- `chop_into_sequences(...)`: RLlib's function, for code that wants the padded layout: every column
  right-zero-padded to [B * T] rows, the initial states and `seq_lens`.
"""
import numpy as np

from relayrl.policy.sample_batch import SampleBatch

# columns whose change between two rows means another trajectory (RLlib's episode_ids, unroll_ids, agent_indices)
_TRAJECTORY_COLUMNS = (SampleBatch.EPS_ID, SampleBatch.UNROLL_ID, SampleBatch.AGENT_INDEX)


def check_max_seq_len(max_seq_len) -> int:
    if isinstance(max_seq_len, bool) or not isinstance(max_seq_len, (int, np.integer)) or max_seq_len < 1:
        raise ValueError(f"model max_seq_len={max_seq_len!r}: give a whole number >= 1 (the longest sequence a "
                         "recurrent model is trained on; RLlib's default is 20).")
    return int(max_seq_len)


def sequence_lengths(count: int, max_seq_len: int, episode_ids=None, unroll_ids=None,
                     agent_indices=None) -> np.ndarray:
    """Lengths of the sequences covering rows 0..count-1 in order: a new one at each trajectory change
    and after every `max_seq_len` rows of one trajectory."""
    max_seq_len = check_max_seq_len(max_seq_len)
    if count == 0:
        return np.zeros(0, np.int32)
    new_trajectory = np.zeros(count, bool)
    new_trajectory[0] = True
    for ids in (episode_ids, unroll_ids, agent_indices):
        if ids is not None:
            ids = np.asarray(ids)
            new_trajectory[1:] |= ids[1:] != ids[:-1]
    starts = np.flatnonzero(new_trajectory)
    lengths = []
    for length in np.diff(np.append(starts, count)):
        full, rest = divmod(int(length), max_seq_len)
        lengths.extend([max_seq_len] * full + ([rest] if rest else []))
    return np.asarray(lengths, np.int32)


def add_seq_lens(batch: SampleBatch, max_seq_len: int) -> SampleBatch:
    """The batch's rows unchanged plus `seq_lens` [B] and `state_in_*` at each sequence's first row [B]."""
    state_keys = sorted((k for k in batch if k.startswith("state_in_")), key=lambda k: int(k[len("state_in_"):]))
    if not state_keys:
        raise KeyError("a recurrent model trains on sequences, but the train batch has no state_in_0 column: "
                       "sample it with the policy (the runners record state_in_i / state_out_i per step).")
    seq_lens = sequence_lengths(batch.count, max_seq_len, *(batch.get(k) for k in _TRAJECTORY_COLUMNS))
    starts = np.cumsum(seq_lens) - seq_lens
    columns = dict(batch)
    for key in state_keys:
        columns[key] = np.asarray(batch[key])[starts]
    columns[SampleBatch.SEQ_LENS] = seq_lens
    sequences = SampleBatch(columns, _max_seq_len=int(max_seq_len), _time_major=batch.time_major,
                            _is_training=batch._is_training, _num_grad_updates=batch.num_grad_updates)
    sequences.count = batch.count
    return sequences


def chop_into_sequences(*, feature_columns, state_columns, max_seq_len: int, episode_ids=None, unroll_ids=None,
                        agent_indices=None, dynamic_max: bool = True):
    """RLlib's layout: (features, each right-zero-padded to [B * T, ...] rows; initial states [B, ...];
    seq_lens [B]). T is the longest sequence with `dynamic_max` (RLlib's default), else `max_seq_len`."""
    count = len(feature_columns[0]) if feature_columns else len(state_columns[0])
    seq_lens = sequence_lengths(count, max_seq_len, episode_ids, unroll_ids, agent_indices)
    steps = int(seq_lens.max()) if dynamic_max and len(seq_lens) else int(max_seq_len)
    real = np.arange(steps)[None, :] < seq_lens[:, None]  # [B, T]; its True cells in order are the rows
    padded = []
    for column in feature_columns:
        column = np.asarray(column)
        out = np.zeros((len(seq_lens) * steps,) + column.shape[1:], column.dtype)
        out[real.reshape(-1)] = column
        padded.append(out)
    starts = np.cumsum(seq_lens) - seq_lens
    initial_states = [np.asarray(s)[starts] for s in state_columns]
    return padded, initial_states, seq_lens


__all__ = ["add_seq_lens", "check_max_seq_len", "chop_into_sequences", "sequence_lengths"]
