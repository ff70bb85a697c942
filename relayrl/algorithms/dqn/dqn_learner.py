"""DQN's Learner: the (double, n-step, importance-weighted) Q-learning loss and target-network updates.

Generic pieces that off-policy subclasses (SAC) reuse:

- `build()` calls `make_target_networks()` on every module with the TargetNetworkAPI;
- `after_gradient_based_update()` updates the targets (`tau`) once `target_network_update_freq`
  sampled env steps passed since the last update (RLlib's rule);
- TD errors for prioritized replay: a loss calls `self.keep_td_errors(module_id, batch, td_errors)`
  with its per-row errors; `get_td_errors()` returns `{module_id: (indices, td_errors)}` (numpy) of
  the last `update()`, where `indices` is the batch's "indices" column (the replay buffer's) or
  None. The algorithm fetches them with
  `learner_group.foreach_learner(lambda learner: learner.get_td_errors())` and passes them to
  `buffer.update_priorities(td_errors, indices)`.

Expected batch columns (the replay buffer's sample()): obs, actions, rewards (n-step discounted
sum), new_obs, terminateds, and optionally n_step (per row; else config.n_step), weights
(importance weights; else 1).

Stateful modules (use_lstm) train on replayed sequences instead: sequence_loss.py.
"""
from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch

from relayrl.algorithms.dqn.default_dqn_rl_module import QF_NEXT_PREDS, QF_PREDS
from relayrl.algorithms.dqn.sequence_loss import (
    is_sequence_batch,
    mask_burn_in,
    put_initial_states,
    sequence_q_loss,
)
from relayrl.core.columns import Columns
from relayrl.learner.learner import NUM_ENV_STEPS_SAMPLED_LIFETIME, Learner
from relayrl.modules.target_network_api import (
    TargetNetworkAPI,
    is_target_key,
    make_target_networks,
    update_target_networks,
)
from relayrl.ops.q_learning import q_learning_targets, td_error_loss

LAST_TARGET_UPDATE_TS = "last_target_update_ts"
NUM_TARGET_UPDATES = "num_target_updates"
TD_ERROR_KEY = "td_error"


class DQNLearner(Learner):
    PER_MODULE_STATE = ("last_target_update_ts", "num_target_updates")  # checkpointed (and checked) per module id

    def build(self) -> None:
        super().build()
        make_target_networks(self.module)
        self._td_errors: Dict[str, list] = {}
        self._last_target_update_ts: Dict[str, int] = {mid: 0 for mid in self.module.keys()}
        self._num_target_updates: Dict[str, int] = {mid: 0 for mid in self.module.keys()}

    def _as_module_batch(self, batch):
        batch = super()._as_module_batch(batch)
        for module_id, module_batch in batch.items():
            if module_id in self.module and is_sequence_batch(module_batch):
                put_initial_states(self.module[module_id], module_batch)  # rows that start an episode
                mask_burn_in(module_batch, self.config.burn_in_len)
        return batch

    # -- the loss ------------------------------------------------------------------------------
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        if is_sequence_batch(batch):  # a stateful module's replayed sequences (sequence_loss.py)
            return sequence_q_loss(self, module_id, module, config, batch, fwd_out)
        q_values = fwd_out[QF_PREDS]
        q_taken = q_values.gather(-1, batch[Columns.ACTIONS].long().unsqueeze(-1)).squeeze(-1)

        with torch.no_grad():
            next_q_target = module.forward_target({Columns.OBS: batch[Columns.NEXT_OBS]})[QF_PREDS]
            next_q_online = fwd_out.get(QF_NEXT_PREDS) if config.double_q else None
            if config.double_q and next_q_online is None:  # a custom module without qf_next_preds
                next_q_online = module.compute_q_values({Columns.OBS: batch[Columns.NEXT_OBS]})[QF_PREDS]
        n_step = batch.get("n_step", config.n_step)
        if isinstance(n_step, tuple):
            raise KeyError("n_step=(low, high) needs the batch's per-row `n_step` column (the replay buffer's "
                           "sample() writes it).")
        targets = q_learning_targets(batch[Columns.REWARDS], batch[Columns.TERMINATEDS], next_q_target,
                                     gamma=config.gamma, n_step=n_step, next_q_online=next_q_online)

        td_errors = q_taken - targets
        weights = batch.get("weights")
        per_row_loss = td_error_loss(td_errors, config.td_error_loss_fn)
        if weights is not None:  # prioritized replay's importance-sampling correction
            per_row_loss = per_row_loss * weights.to(per_row_loss.dtype)
        total_loss = per_row_loss.mean()

        self.keep_td_errors(module_id, batch, td_errors)
        self.log_stats(module_id, {"qf_loss": total_loss, "total_loss": total_loss})
        self.log_row_stats(module_id, {"q": q_taken, "targets": targets, "td": td_errors}, _q_stats)
        return total_loss

    # -- TD errors for prioritized replay ----------------------------------------------------------
    def keep_td_errors(self, module_id: str, batch: Dict[str, Any], td_errors: torch.Tensor) -> None:
        """Remember this minibatch's per-row TD errors (and the buffer indices of its rows)."""
        self._td_errors.setdefault(module_id, []).append((batch.get("indices"), td_errors.detach()))

    def get_td_errors(self) -> Dict[str, Tuple[Optional[np.ndarray], np.ndarray]]:
        """{module_id: (buffer indices or None, per-row TD errors)} of the last update(), as numpy."""
        out = {}
        for module_id, parts in self._td_errors.items():
            indices = [i for i, _ in parts]
            td = torch.cat([t for _, t in parts]).cpu().numpy()
            if any(i is None for i in indices):
                out[module_id] = (None, td)
            else:
                out[module_id] = (torch.cat([torch.as_tensor(i) for i in indices]).cpu().numpy(), td)
        return out

    def before_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        super().before_gradient_based_update(timesteps=timesteps)
        self._td_errors = {}

    # -- target networks ----------------------------------------------------------------------
    def after_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        """Update a module's targets once `target_network_update_freq` sampled steps passed since its last."""
        super().after_gradient_based_update(timesteps=timesteps)
        now = timesteps.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        for module_id in self.modules_in_update():
            module = self.module[module_id]
            if not isinstance(module, TargetNetworkAPI):
                continue
            last = self._last_target_update_ts.get(module_id, 0)
            if now - last >= self.config.target_network_update_freq:
                update_target_networks(module, self.config.tau)
                self._last_target_update_ts[module_id] = now
                self._num_target_updates[module_id] = self._num_target_updates.get(module_id, 0) + 1
            self.metrics.log_value((module_id, NUM_TARGET_UPDATES), self._num_target_updates.get(module_id, 0),
                                   window=1)
            self.metrics.log_value((module_id, LAST_TARGET_UPDATE_TS), self._last_target_update_ts.get(module_id, 0),
                                   window=1)

    # -- state ---------------------------------------------------------------------------------
    def get_weights(self, module_ids=None, inference_only: bool = False) -> Dict[str, Any]:
        """EnvRunners (inference_only) get no target-network weights, whatever the module's get_state does."""
        weights = super().get_weights(module_ids=module_ids, inference_only=inference_only)
        if inference_only:
            weights = {mid: {k: v for k, v in state.items() if not is_target_key(k)}
                       for mid, state in weights.items()}
        return weights

    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state()
        state["last_target_update_ts"] = dict(self._last_target_update_ts)
        state["num_target_updates"] = dict(self._num_target_updates)
        return state

    def set_state(self, state):
        super().set_state(state)
        self._last_target_update_ts.update(state.get("last_target_update_ts", {}))
        self._num_target_updates.update(state.get("num_target_updates", {}))


def _q_stats(rows):
    """Per-update Q statistics from stacked per-row tensors ([updates, rows]); see Learner.log_row_stats."""
    q = rows["q"]
    return {"qf_mean": q.mean(-1), "qf_max": q.amax(-1), "qf_min": q.amin(-1),
            "qf_target_next_mean": rows["targets"].mean(-1), "td_error_mean": rows["td"].mean(-1)}


DQNTorchLearner = DQNLearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["DQNTorchLearner", "DQNLearner", "TD_ERROR_KEY", "LAST_TARGET_UPDATE_TS", "NUM_TARGET_UPDATES"]
