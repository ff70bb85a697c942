"""V-trace (IMPALA, Espeholt et al. 2018, section 4): off-policy value targets and policy-gradient advantages.

`vtrace` is the math on time-major (T, B) fragments. `vtrace_on_chunks` runs it on relayrl's flat
train-batch layout (each episode chunk followed by one artificial step, `loss_mask` False, whose
value is the chunk's bootstrap value) and returns flat columns, as `compute_gae` does for PPO.
"""
from typing import NamedTuple, Optional, Tuple

import numpy as np
import torch


class VTraceReturns(NamedTuple):
    vs: torch.Tensor  # value targets v_s
    pg_advantages: torch.Tensor  # clipped_pg_rho_s * (r_s + discount_s * v_{s+1} - V(x_s))


def vtrace(behaviour_logp: torch.Tensor, target_logp: torch.Tensor, rewards: torch.Tensor,
           discounts: torch.Tensor, values: torch.Tensor, bootstrap_value: torch.Tensor, *,
           clip_rho_threshold: Optional[float] = 1.0, clip_pg_rho_threshold: Optional[float] = 1.0,
           clip_c_threshold: Optional[float] = 1.0) -> VTraceReturns:
    """V-trace targets `vs` and policy-gradient advantages for T steps of B fragments (no gradient).

    Layout is time-major: `behaviour_logp`, `target_logp`, `rewards`, `discounts` and `values` are
    (T, B) (row t = step t of every fragment; more trailing batch dims are allowed), and
    `bootstrap_value` is (B,): V(x_T), the value of the observation after each fragment's last step.

    `discounts[t]` = gamma * (1 - terminated[t]): a 0 ends the episode at step t, so nothing after
    it (later steps of the fragment, or the bootstrap value) reaches the steps up to t. With
    rho_t = exp(target_logp - behaviour_logp), rho_bar = min(clip_rho_threshold, rho),
    c = min(clip_c_threshold, rho) and delta_t = rho_bar_t (r_t + discount_t V(x_{t+1}) - V(x_t)):

        v_s = V(x_s) + delta_s + discount_s c_s (v_{s+1} - V(x_{s+1})),    v_T = V(x_T)
        pg_advantage_s = min(clip_pg_rho_threshold, rho_s) (r_s + discount_s v_{s+1} - V(x_s))

    A threshold of None means no clipping. The paper assumes c_bar <= rho_bar; RLlib fixes c_bar
    at 1.0 (the default here). Outputs have the dtype the inputs promote to and are detached.
    """
    _check_shapes(behaviour_logp, target_logp, rewards, discounts, values, bootstrap_value)
    with torch.no_grad():
        values, bootstrap_value = values.detach(), bootstrap_value.detach()
        rhos = torch.exp(target_logp.detach() - behaviour_logp.detach())
        bootstrap_row = bootstrap_value.unsqueeze(0)
        next_values = torch.cat([values[1:], bootstrap_row])
        deltas = _clipped(rhos, clip_rho_threshold) * (rewards + discounts * next_values - values)
        vs_minus_values = _reverse_discounted_sum(deltas, discounts * _clipped(rhos, clip_c_threshold))
        vs = vs_minus_values + values
        next_vs = torch.cat([vs[1:], bootstrap_row])
        pg_advantages = _clipped(rhos, clip_pg_rho_threshold) * (rewards + discounts * next_vs - values)
    return VTraceReturns(vs, pg_advantages)


def _clipped(rhos: torch.Tensor, threshold: Optional[float]) -> torch.Tensor:
    return rhos if threshold is None else torch.clamp(rhos, max=threshold)


def _check_shapes(*tensors: torch.Tensor) -> None:
    *per_step, bootstrap_value = tensors
    shape = per_step[0].shape
    if any(t.shape != shape for t in per_step) or len(shape) < 1:
        raise ValueError("vtrace: behaviour_logp, target_logp, rewards, discounts and values must share one "
                         f"time-major shape (T, B); got {[tuple(t.shape) for t in per_step]}")
    if bootstrap_value.shape != shape[1:]:
        raise ValueError(f"vtrace: bootstrap_value must have shape {tuple(shape[1:])} (one per fragment), "
                         f"got {tuple(bootstrap_value.shape)}")


def _reverse_discounted_sum(deltas: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """a_t = deltas_t + weights_t * a_{t+1} (a_T = 0) over dim 0, vectorised over the rest; writes into `deltas`.

    One step per time index, in place on row views. On CPU the loop runs in numpy, whose per-call
    overhead is a fraction of torch's: 1.6-3.6x faster than the torch loop at T=50, B=64..512, and far
    faster than a loop-free O(T^2 B) cumprod scan (benchmarks/vtrace_speed.py).
    """
    if deltas.device.type == "cpu" and deltas.dtype in (torch.float32, torch.float64):
        return _reverse_discounted_sum_numpy(deltas, weights)
    return _reverse_discounted_sum_torch(deltas, weights)


def _reverse_discounted_sum_torch(deltas: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    out = deltas.contiguous()
    rows, weight_rows = out.unbind(0), weights.to(out.dtype).unbind(0)
    for t in range(len(rows) - 2, -1, -1):
        rows[t].addcmul_(weight_rows[t], rows[t + 1])
    return out


def _reverse_discounted_sum_numpy(deltas: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    out = deltas.contiguous()
    rows = list(out.numpy())  # views into `out`
    weight_rows = list(weights.to(out.dtype).numpy())
    if rows:
        scratch = np.empty_like(rows[0])
        for t in range(len(rows) - 2, -1, -1):
            np.multiply(weight_rows[t], rows[t + 1], out=scratch)
            np.add(rows[t], scratch, out=rows[t])
    return out


def chunks_to_time_major(loss_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gather indices that turn relayrl's flat chunk layout into time-major (T, B) columns.

    The flat batch (N,) is episode chunks, each followed by one artificial step (`loss_mask` False)
    whose observation is the one after the chunk's last step. Chunk b becomes column b, T is the
    longest chunk. Returns (index (T, B), valid (T, B), bootstrap_index (B,)): `column[index]` is
    the time-major column, `valid` marks real steps, padding (t >= chunk length) indexes the
    chunk's artificial row, and `bootstrap_index` is that row. Rows with `loss_mask` False that
    follow another such row (recurrent zero padding) start no column.
    """
    mask = loss_mask.reshape(-1).bool()
    if mask.numel() and bool(mask[-1]):
        raise ValueError("chunks_to_time_major: the flat batch must end with an artificial step (loss_mask "
                         "False) after the last chunk; keep AddOneTsToEpisodesAndTruncate in the pipeline")
    ends = torch.nonzero(~mask).reshape(-1)  # one artificial (or padding) row closes each run of real rows
    starts = torch.cat([ends.new_zeros(1), ends + 1])[:-1]
    lengths = ends - starts
    keep = lengths > 0
    starts, ends, lengths = starts[keep], ends[keep], lengths[keep]
    num_steps = int(lengths.max()) if lengths.numel() else 0
    steps = torch.arange(num_steps, device=mask.device).unsqueeze(1)
    index = torch.minimum(starts.unsqueeze(0) + steps, ends.unsqueeze(0))
    return index, steps < lengths.unsqueeze(0), ends


def vtrace_on_chunks(behaviour_logp: torch.Tensor, target_logp: torch.Tensor, rewards: torch.Tensor,
                     values: torch.Tensor, terminateds: torch.Tensor, loss_mask: torch.Tensor, *, gamma: float,
                     clip_rho_threshold: Optional[float] = 1.0, clip_pg_rho_threshold: Optional[float] = 1.0,
                     clip_c_threshold: Optional[float] = 1.0) -> VTraceReturns:
    """`vtrace` on relayrl's flat train-batch layout; returns (vs, pg_advantages) shaped like `values`.

    Inputs are the batch's columns: flat (N,), or (sequences, max_seq_len) for recurrent batches
    (flattened row-major, where each chunk is contiguous). The value on a chunk's artificial row
    is its bootstrap value; discounts are gamma * (1 - terminateds) on real rows. Padding steps
    get reward 0, discount 1, rho 1 and the bootstrap value as V, so their delta is exactly 0
    and they pass the bootstrap value through unchanged. Outputs are 0 on artificial rows.
    """
    shape = values.shape
    index, valid, bootstrap_index = chunks_to_time_major(loss_mask)
    flat = [x.reshape(-1) for x in (behaviour_logp, target_logp, rewards, values, terminateds)]
    behaviour_logp, target_logp, rewards, values, terminateds = flat
    dtype = torch.promote_types(values.dtype, rewards.dtype)
    zero = torch.zeros((), dtype=dtype, device=values.device)
    real_discounts = gamma * (1.0 - terminateds[index].to(dtype))
    result = vtrace(
        torch.where(valid, behaviour_logp[index], zero), torch.where(valid, target_logp[index], zero),
        torch.where(valid, rewards[index], zero), torch.where(valid, real_discounts, zero + 1.0),
        values[index], values[bootstrap_index],
        clip_rho_threshold=clip_rho_threshold, clip_pg_rho_threshold=clip_pg_rho_threshold,
        clip_c_threshold=clip_c_threshold,
    )
    rows = index[valid]
    out = []
    for time_major in result:
        column = torch.zeros(values.shape, dtype=time_major.dtype, device=values.device)
        column[rows] = time_major[valid]
        out.append(column.reshape(shape))
    return VTraceReturns(*out)
