"""DQN's loss on replayed sequences (stateful modules, R2D2-style), and the state fix-up before the forward pass.

The batch is replay/sequence_batch.py's: `obs` (B, L, ...) from the stored state `state_in`, and per training
step t < T: actions, n-step returns, done flags, `bootstrap_index` (the obs position to bootstrap from) and
`loss_mask`. The online net's forward pass already ran over `obs` (the module's first `burn_in_len` steps
without gradients); the target net runs over the same sequences from the same state, so each bootstrap
Q-value has the state its observation had in the episode.
"""
from typing import Any, Dict

import torch

from relayrl.core.columns import Columns
from relayrl.ops.q_learning import q_learning_targets, td_error_loss
from relayrl.replay.sequence_batch import BOOTSTRAP_INDEX, STATE_IS_INITIAL

# R2D2's sequence priority: eta * max |td| + (1 - eta) * mean |td| over the sequence's trained steps.
PRIORITY_ETA = 0.9


def is_sequence_batch(batch: Dict[str, Any]) -> bool:
    return BOOTSTRAP_INDEX in batch


def put_initial_states(module, batch: Dict[str, Any]) -> Dict[str, Any]:
    """Rows whose sequence starts an episode get the module's initial state (the buffer stored zeros there)."""
    flags = batch.pop(STATE_IS_INITIAL, None)
    if flags is None or not bool(flags.any()):
        return batch
    initial = module.get_initial_state()

    def fill(stored, init):
        if isinstance(stored, dict):
            return {k: fill(stored[k], init[k]) for k in stored}
        init = torch.as_tensor(init, dtype=stored.dtype, device=stored.device)
        where = flags.view((-1,) + (1,) * (stored.dim() - 1))
        return torch.where(where, init.unsqueeze(0).expand_as(stored), stored)

    batch[Columns.STATE_IN] = fill(batch[Columns.STATE_IN], initial)
    return batch


def mask_burn_in(batch: Dict[str, Any], burn_in_len: int) -> torch.Tensor:
    """The trained steps: real (not padding) and past the burn-in, which only warms up the state. Written back as
    the batch's `loss_mask`, so the Learner's trained-step counts leave the burn-in out too."""
    mask = batch[Columns.LOSS_MASK].bool()
    if burn_in_len > 0 and mask[:, :burn_in_len].any():
        mask = mask.clone()
        mask[:, :burn_in_len] = False
    batch[Columns.LOSS_MASK] = mask
    return mask


def sequence_q_loss(learner, module_id: str, module, config, batch: Dict[str, Any], fwd_out: Dict[str, Any]):
    q_all = fwd_out["qf_preds"]  # (B, L, A): every obs position
    actions = batch[Columns.ACTIONS].long()
    seq_len = actions.shape[1]
    q_taken = q_all[:, :seq_len].gather(-1, actions.unsqueeze(-1)).squeeze(-1)  # (B, T)

    with torch.no_grad():
        q_target_all = module.forward_target({Columns.OBS: batch[Columns.OBS],
                                              Columns.STATE_IN: batch[Columns.STATE_IN]})["qf_preds"]
        index = batch[BOOTSTRAP_INDEX].long().unsqueeze(-1).expand(-1, -1, q_all.shape[-1])
        next_q_target = q_target_all.gather(1, index)  # (B, T, A): Q_target at each step's bootstrap obs
        next_q_online = q_all.detach().gather(1, index) if config.double_q else None
    targets = q_learning_targets(batch[Columns.REWARDS], batch[Columns.TERMINATEDS], next_q_target,
                                 gamma=config.gamma, n_step=batch["n_step"], next_q_online=next_q_online)

    mask = mask_burn_in(batch, config.burn_in_len)
    maskf = mask.to(q_taken.dtype)
    num_trained = maskf.sum().clamp(min=1.0)
    td_errors = (q_taken - targets) * maskf
    per_step = td_error_loss(td_errors, config.td_error_loss_fn) * maskf
    weights = batch.get("weights")
    if weights is not None:  # prioritized replay's importance weights, one per sequence
        per_step = per_step * weights.to(per_step.dtype).unsqueeze(-1)
    total_loss = per_step.sum() / num_trained

    abs_td = td_errors.detach().abs()
    mean_abs = abs_td.sum(1) / maskf.sum(1).clamp(min=1.0)
    learner.keep_td_errors(module_id, batch, PRIORITY_ETA * abs_td.amax(1) + (1 - PRIORITY_ETA) * mean_abs)
    q_trained = q_taken.detach()[mask]
    learner.log_stats(module_id, {
        "qf_loss": total_loss, "total_loss": total_loss,
        "qf_mean": q_trained.mean() if q_trained.numel() else 0.0,
        "qf_target_next_mean": (targets * maskf).sum() / num_trained,
        "td_error_mean": td_errors.detach().sum() / num_trained,
    })
    return total_loss


__all__ = ["sequence_q_loss", "put_initial_states", "mask_burn_in", "is_sequence_batch"]
