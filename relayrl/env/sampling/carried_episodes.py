"""`hand_over_carried`: many running episodes take their rows of a `VectorStepLog` at once, numpy'd.

An episode that began before a sample() call (the chunk `cut()` left running: its lookback and first
observation as list items) takes its rows 0..last of the call's log when it ends or when the call
stops. `VectorStepLog.hand_over` does that one episode at a time (`add_env_steps(..., to_numpy=True)`:
per column a stack of its items and a concatenation, ~23 µs for a CartPole chunk). Here every column
is built for all the episodes together: one stack of all their items, one gather of all their rows,
two scatters into one array, of which each episode's column is a slice. The result is the same data,
dtypes and lookbacks; only applies (returns False, touching nothing) when every episode is a running,
list-based one whose extra-output keys are the log's (or none yet, before its first step), the log's
columns are flat, and each column's items stack to the log's dtype and row shape.
"""
from typing import List, Tuple

import numpy as np

from relayrl.env.sampling.vector_step_log import VectorStepLog
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer


def hand_over_carried(log: VectorStepLog, spans: List[Tuple], end_times: List[float]) -> bool:
    """`spans`: (episode, sub-env, last row, terminated, truncated, final info or None) each taking the rows
    0..last of its sub-env; `end_times`: each episode's last step time. False (nothing done): hand over one by one."""
    keys = log.extra_keys
    if not log.flat:
        return False
    columns = []  # per episode: its buffers in the log's column order (None: an extra key it has no buffer for)
    for episode, *_ in spans:
        if episode.observations.finalized or episode.is_terminated or episode.is_truncated:
            return False
        extras = episode.extra_model_outputs
        if extras.keys() != set(keys) and (extras or len(episode.actions.data)):
            return False
        buffers = [episode.observations, episode.actions, episode.rewards, *(extras.get(key) for key in keys)]
        if any(buffer is not None and type(buffer.data) is not list for buffer in buffers):
            return False
        columns.append(buffers)
    envs = np.array([span[1] for span in spans])
    lasts = np.array([span[2] for span in spans])
    rows = log.gather(envs, np.zeros_like(lasts), lasts + 1)
    row_counts = lasts + 1
    built = []
    for c, gathered in enumerate(rows):
        items = [buffers[c].data if buffers[c] is not None else [] for buffers in columns]
        joined = _join(items, row_counts, gathered)
        if joined is None:
            return False
        built.append(joined)
    for k, (episode, i, last, terminated, truncated, final_info) in enumerate(spans):
        extras = episode.extra_model_outputs
        for key in keys:
            if key not in extras:
                extras[key] = InfiniteLookbackBuffer()
        for buffer, parts in zip((episode.observations, episode.actions, episode.rewards,
                                  *(extras[key] for key in keys)), built):
            buffer.data, buffer.finalized = parts[k], True
        episode.infos.data.extend(log.infos_of(i, 0, last + 1, final_info))
        episode.t += last + 1
        episode.is_terminated, episode.is_truncated = terminated, truncated
        episode._last_step_time = end_times[k]
    return True


def _join(items: List[list], row_counts: np.ndarray, gathered: np.ndarray):
    """Per episode its items then its rows, as slices of one array; None if the items do not stack to the
    gathered rows' dtype and row shape (a per-episode concatenation could then give another dtype)."""
    item_counts = np.array([len(part) for part in items])
    flat = [item for part in items for item in part]
    stacked = None
    if flat:
        try:
            stacked = np.array(flat)
        except ValueError:  # ragged rows
            return None
        if stacked.dtype != gathered.dtype or stacked.shape[1:] != gathered.shape[1:]:
            return None
    sizes = item_counts + row_counts
    ends = np.cumsum(sizes)
    starts = ends - sizes
    out = np.empty((int(ends[-1]),) + gathered.shape[1:], gathered.dtype)
    if stacked is not None:
        out[_positions(starts, item_counts)] = stacked
    out[_positions(starts + item_counts, row_counts)] = gathered
    starts, ends = starts.tolist(), ends.tolist()
    return [out[a:b] for a, b in zip(starts, ends)]


def _positions(firsts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """firsts[0], firsts[0]+1, ... (counts[0] of them), then firsts[1], ... as one index array."""
    offsets = np.cumsum(counts) - counts
    return np.arange(int(counts.sum())) + np.repeat(firsts - offsets, counts)
