"""Replayed sequences for stateful modules (R2D2): B rows of `max_seq_len` steps, each with the state the
sampler had before its first step, zero-padded and masked where its episode ends.

A row starts at a sampled step and follows the storage's `next_index` pointers, so it never crosses into
another episode: where the episode ends (or its continuation has not arrived yet) the rest is padding
(`loss_mask` False). Per training step t the row holds the n-step return, the flags of the last summed
step and `bootstrap_index` = t + steps, the position in `obs` of the observation to bootstrap from. `obs`
runs `n_step - 1` steps past the T training steps plus one observation after the last real step, so every
bootstrap observation of the row is in it and one LSTM run (online or target net) over `obs` gives the
Q-values at every bootstrap position with the right state. Whole tensors, no Python loop over rows or steps.
"""
from typing import Dict, Optional, Union

import numpy as np

from relayrl.core.columns import Columns
from relayrl.ops.n_step import n_step_lookahead
from relayrl.replay import nested

BOOTSTRAP_INDEX = "bootstrap_index"
STATE_IS_INITIAL = "state_is_initial"


def build_sequence_batch(storage, starts: np.ndarray, seq_len: int, n: Union[int, np.ndarray], gamma: float,
                         weights: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """Rows of `seq_len` training steps starting at slots `starts` (B,); `n` an int or (B, seq_len) ints."""
    if not storage.states:
        raise ValueError("Replay buffer: sequences (batch_length_T > 1) need episodes from a stateful RLModule "
                         "(their `state_out`); these episodes have none. Fix: use_lstm=True in the model_config, or "
                         "sample single transitions (batch_length_T=1).")
    num_rows = len(starts)
    max_n = int(n) if np.isscalar(n) else int(n.max())
    length = seq_len + max_n - 1  # steps followed: the T training steps and the n-step look-ahead of the last
    hops = np.empty((length, num_rows), np.int64)
    hops[0] = starts
    for k in range(1, length):
        hops[k] = storage.next_index[np.maximum(hops[k - 1], 0)]
        hops[k][hops[k - 1] < 0] = -1
    valid = (hops >= 0).T  # (B, length); a -1 stays -1 after it
    num_valid = valid.sum(1)

    # Observations: the steps' own rows, then the next observation of each row's last real step.
    rows = np.where(valid, storage.obs_row[np.maximum(hops.T, 0)], 0)
    last = hops.T[np.arange(num_rows), num_valid - 1]
    obs_rows = np.zeros((num_rows, length + 1), np.int64)
    obs_rows[:, :length] = rows
    obs_rows[np.arange(num_rows), num_valid] = storage.obs_row[last] + 1
    obs_valid = np.zeros((num_rows, length + 1), bool)
    obs_valid[:, :length] = valid
    obs_valid[np.arange(num_rows), num_valid] = True
    obs = [_zero_where(leaf.reshape((num_rows, length + 1) + leaf.shape[1:]), ~obs_valid)
           for leaf in storage.obs_ring.gather(obs_rows.reshape(-1))]

    # Training steps: n-step returns from each real step, bootstrapped at obs position t + steps.
    train_valid = valid[:, :seq_len]
    step_slots = np.where(train_valid, hops.T[:, :seq_len], starts[:, None]).reshape(-1)
    n_flat = n if np.isscalar(n) else np.asarray(n).reshape(-1)
    last_step, returns, steps = n_step_lookahead(step_slots, n_flat, storage.next_index, storage.rewards, gamma)
    shape = (num_rows, seq_len)
    steps = np.where(train_valid, steps.reshape(shape), 1)
    actions = [_zero_where(leaf[step_slots].reshape(shape + leaf.shape[1:]), ~train_valid)
               for leaf in storage.actions]
    state_in, state_is_initial = storage.gather_states(starts)
    return {
        Columns.OBS: nested.unflatten(storage.obs_spec, obs),
        Columns.ACTIONS: nested.unflatten(storage.action_spec, actions),
        Columns.REWARDS: np.where(train_valid, returns.reshape(shape), np.float32(0.0)),
        Columns.TERMINATEDS: storage.terminated[last_step].reshape(shape) & train_valid,
        Columns.TRUNCATEDS: storage.truncated[last_step].reshape(shape) & train_valid,
        "n_step": steps,
        BOOTSTRAP_INDEX: np.arange(seq_len)[None, :] + steps,
        Columns.LOSS_MASK: train_valid,
        Columns.SEQ_LENS: train_valid.sum(1),
        Columns.STATE_IN: state_in,
        STATE_IS_INITIAL: state_is_initial,
        "weights": np.ones(num_rows, np.float32) if weights is None else weights,
        "indices": storage.slot_abs[starts],
    }


def _zero_where(values: np.ndarray, padding: np.ndarray) -> np.ndarray:
    """Zero padding (the gathered garbage there), as the Learner's zero-padded sequences."""
    if padding.any():
        values = values.copy()
        values[padding] = 0
    return values


__all__ = ["build_sequence_batch", "BOOTSTRAP_INDEX", "STATE_IS_INITIAL"]
