"""SAC's Learner: soft Q-learning critics, the entropy-regularised actor and the learned temperature alpha.

Four optimisers per module (RLlib's names): "qf" and "qf_twin" (critic_lr), "policy" (actor_lr) and
"alpha" (alpha_lr). Each loss reaches only its own optimiser's parameters, so one backward pass over
the summed loss gives every optimiser its gradients: the critics' targets carry no gradient, the actor
sees Q(s, a~pi(s)) through detached Q weights (the module's forward_train), and alpha's loss uses
detached log-probs.

Target networks and TD errors for prioritized replay come from DQNLearner (SAC subclasses DQN as in
RLlib): targets move by `tau` every `target_network_update_freq` sampled env steps, and each row's
TD error (the mean of both critics' |TD|) goes back to the replay buffer.
"""
import math
from typing import Any, Dict

import gymnasium as gym
import torch
from torch import nn

from relayrl.algorithms.dqn.dqn_learner import DQNLearner
from relayrl.algorithms.sac.default_sac_rl_module import (
    ACTION_PROBS,
    ACTION_PROBS_NEXT,
    LOGP_NEXT_RESAMPLED,
    LOGP_RESAMPLED,
    Q_CURR,
    Q_TARGET_NEXT,
    QF_PREDS,
    QF_TWIN_PREDS,
)
from relayrl.core.columns import Columns
from relayrl.learner.optimizers import make_adam
from relayrl.ops.q_learning import bootstrap_targets, td_error_loss



def resolve_target_entropy(action_space, target_entropy) -> float:
    """'auto' (or None): -dim(A) for Box actions, 0.98 * log(|A|) for Discrete (RLlib's choices)."""
    if target_entropy is not None and target_entropy != "auto":
        return float(target_entropy)
    if isinstance(action_space, gym.spaces.Discrete):
        return 0.98 * math.log(action_space.n)
    return -float(math.prod(action_space.shape))


class SACLearner(DQNLearner):
    PER_MODULE_STATE = DQNLearner.PER_MODULE_STATE + ("curr_log_alpha",)  # checkpointed (and checked) per module id

    def build(self) -> None:
        self.curr_log_alpha: Dict[str, nn.Parameter] = {}
        self.target_entropy: Dict[str, float] = {}
        self._optimizer_params: Dict[tuple, list] = {}
        super().build()
        self.when_config_changes("target_entropy", self._resolve_target_entropy)

    def _resolve_target_entropy(self, target_entropy, timestep: int) -> None:
        for module_id in self.target_entropy:
            self.target_entropy[module_id] = resolve_target_entropy(self.module[module_id].action_space,
                                                                    target_entropy)

    # -- optimisers ------------------------------------------------------------------------------
    # optimiser name -> (the module attributes it trains, its learning-rate option); a subclass (IQL) adds its own
    OPTIMIZER_NETS = {"qf": (("qf_encoder", "qf"), "critic_lr"),
                      "qf_twin": (("qf_twin_encoder", "qf_twin"), "critic_lr"),
                      "policy": (("pi_encoder", "pi"), "actor_lr")}

    def configure_optimizers_for_module(self, module_id: str, config=None) -> None:
        config = config or self.config
        module = self.module[module_id]
        self.curr_log_alpha[module_id] = nn.Parameter(torch.tensor(math.log(config.initial_alpha), device=self.device))
        self.target_entropy[module_id] = resolve_target_entropy(module.action_space, config.target_entropy)
        self.configure_network_optimizers(module_id, config)
        self._add_optimizer(module_id, "alpha", [self.curr_log_alpha[module_id]], config, "alpha_lr")

    def configure_network_optimizers(self, module_id: str, config) -> None:
        """One Adam per entry of OPTIMIZER_NETS (the twin critic's only with twin_q)."""
        module = self.module[module_id]
        for name, (attributes, lr_option) in self.OPTIMIZER_NETS.items():
            if name == "qf_twin" and not getattr(module, "twin_q", False):
                continue
            missing = [a for a in attributes if not hasattr(module, a)]
            if missing:
                raise ValueError(f"{type(self).__name__} trains the module attributes {attributes} with optimiser "
                                 f"`{name}`, but {type(module).__name__} has no {missing}. Fix: name your networks "
                                 "like the algorithm's default module does, or override "
                                 "configure_optimizers_for_module.")
            params = [p for a in attributes for p in getattr(module, a).parameters() if p.requires_grad]
            self._add_optimizer(module_id, name, params, config, lr_option)

    def _add_optimizer(self, module_id, name, params, config, lr_option) -> None:
        self._optimizer_params[(module_id, name)] = params
        self.register_optimizer(module_id=module_id, optimizer_name=name, optimizer=make_adam(params),
                                params=params, lr_or_lr_schedule=getattr(config, lr_option), lr_option=lr_option)

    # -- the loss -----------------------------------------------------------------------------------
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        """Critics (twin Q), actor and temperature, summed: each term reaches only its optimiser's parameters.

        Box actions: expectations over pi are the module's one reparameterised sample per row. Discrete
        actions (Christodoulou 2019): the module gives every action's values, and expectations are exact
        sums over pi's probabilities.
        """
        module = self.module[module_id]
        log_alpha = self.curr_log_alpha[module_id]
        alpha = log_alpha.detach().exp()
        target_entropy = self.target_entropy[module_id]
        discrete = isinstance(module.action_space, gym.spaces.Discrete)

        def expectation_over_pi(values, probs_key):
            return (fwd_out[probs_key] * values).sum(-1) if discrete else values

        # Critics: y = r + gamma**n (1 - terminated) V(s'), V(s') = E_a'~pi(s')[min_i Q_target_i(s', a')
        # - alpha log pi(a'|s')] (no gradient); Huber or MSE of each critic's TD error, importance-weighted.
        n_step = batch.get("n_step", config.n_step)
        if isinstance(n_step, tuple):
            raise KeyError("n_step=(low, high) needs the batch's per-row `n_step` column (the replay buffer's "
                           "sample() writes it).")
        next_values = expectation_over_pi(fwd_out[Q_TARGET_NEXT] - alpha * fwd_out[LOGP_NEXT_RESAMPLED],
                                          ACTION_PROBS_NEXT)
        targets = bootstrap_targets(batch[Columns.REWARDS], batch[Columns.TERMINATEDS], next_values,
                                    gamma=config.gamma, n_step=n_step)
        weights = batch.get("weights")
        critic_losses, abs_td = {}, None
        for name, key in (("qf", QF_PREDS), ("qf_twin", QF_TWIN_PREDS)):
            if key not in fwd_out:  # one Q network (twin_q=False)
                continue
            td = fwd_out[key] - targets
            per_row = td_error_loss(td, config.td_error_loss_fn)
            if weights is not None:  # prioritized replay's importance-sampling correction
                per_row = per_row * weights.to(per_row.dtype)
            critic_losses[name] = per_row.mean()
            # Each row's new priority: the mean of the critics' |TD|.
            abs_td = td.detach().abs() if abs_td is None else 0.5 * (abs_td + td.detach().abs())

        # Actor: E_a~pi(s)[alpha log pi(a|s) - min_i Q_i(s, a)]; Q_CURR's gradient reaches the policy only.
        logp = fwd_out[LOGP_RESAMPLED]
        actor_loss = expectation_over_pi(alpha * logp - fwd_out[Q_CURR], ACTION_PROBS).mean()

        # Temperature: -log_alpha (E[log pi(a|s)] + target_entropy), the log-probs detached.
        expected_logp = expectation_over_pi(logp, ACTION_PROBS).detach()
        alpha_loss = -(log_alpha * (expected_logp + target_entropy)).mean()

        total_loss = sum(critic_losses.values()) + actor_loss + alpha_loss
        self.keep_td_errors(module_id, batch, abs_td)
        self.log_stats(module_id, {
            **{f"{name}_loss": loss for name, loss in critic_losses.items()},
            "actor_loss": actor_loss, "alpha_loss": alpha_loss, "alpha_value": alpha, "log_alpha": log_alpha,
            "target_entropy": target_entropy, "total_loss": total_loss,
        })
        self.log_row_stats(module_id, {"q": fwd_out[QF_PREDS], "targets": targets, "abs_td": abs_td,
                                       "logp": expected_logp}, _sac_row_stats)
        return total_loss

    # -- gradients -----------------------------------------------------------------------------------
    def postprocess_gradients(self, gradients_dict: Dict[str, Any]) -> Dict[str, Any]:
        """grad_clip applies per optimiser (RLlib's behaviour), not over all of a module's parameters."""
        if self.config.grad_clip is None:
            return gradients_dict
        for (module_id, _), params in self._optimizer_params.items():
            if module_id in gradients_dict:
                self.postprocess_gradients_for_module(module_id=module_id, config=self.config,
                                                      module_gradients_dict=params)
        return gradients_dict

    def _parameter_names(self, module_id: str) -> Dict[int, str]:
        """The module's parameter names plus log-alpha's, which lives in the Learner (for error messages)."""
        names = super()._parameter_names(module_id)
        if module_id in self.curr_log_alpha:
            names[id(self.curr_log_alpha[module_id])] = "curr_log_alpha"
        return names

    # -- state ---------------------------------------------------------------------------------------
    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state()
        state["curr_log_alpha"] = {mid: float(p.detach()) for mid, p in self.curr_log_alpha.items()}
        return state

    def set_state(self, state):
        super().set_state(state)
        with torch.no_grad():
            for mid, value in state.get("curr_log_alpha", {}).items():
                self.curr_log_alpha[mid].fill_(value)


def _sac_row_stats(rows):
    """Per-update statistics from stacked per-row tensors ([updates, rows]); see Learner.log_row_stats."""
    q = rows["q"]
    return {"qf_mean": q.mean(-1), "qf_max": q.amax(-1), "qf_min": q.amin(-1), "qf_target_mean": rows["targets"].mean(-1),
            "td_error_mean": rows["abs_td"].mean(-1), "entropy": -rows["logp"].mean(-1)}


SACTorchLearner = SACLearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["SACTorchLearner", "SACLearner", "resolve_target_entropy"]
