"""CQL's Learner: SAC's critics, actor and temperature, plus the conservative term that pushes Q down on actions
the data does not hold and up on the logged ones (Kumar et al. 2020, CQL(H)).

Per critic: MSE to y = r + gamma (1 - terminated) V(s') (V(s') = min twin target Q at a' ~ pi(s'), minus
alpha log pi(a'|s') unless deterministic_backup), plus

    min_q_weight * (temperature * logsumexp_j(Q(s, a_j) / temperature - log density(a_j)) - Q(s, a_data))

over `num_actions` uniform actions (density 0.5^dim) and policy actions at s and s' (density pi). With
`lagrangian`, alpha' = exp(log alpha') (clipped to [0, 1e6]) scales (that term - lagrangian_thresh) and is tuned
to keep the term at the threshold. For the first `bc_iters` updates the actor clones the logged actions
(alpha log pi(a~pi|s) - log pi(a_data|s)), then it takes SAC's loss. Each term reaches only its own optimiser's
parameters, so one backward pass serves all optimisers (as SAC's).
"""
import math
from typing import Dict

import torch
from torch import nn

from relayrl.algorithms.cql.default_cql_rl_module import (
    LOGPS_CURR_REPEAT,
    LOGPS_NEXT_REPEAT,
    Q_CURR_REPEAT,
    Q_NEXT_REPEAT,
    Q_RAND_REPEAT,
    twin_key,
)
from relayrl.algorithms.sac.default_sac_rl_module import (
    LOGP_NEXT_RESAMPLED,
    LOGP_RESAMPLED,
    Q_CURR,
    Q_TARGET_NEXT,
    QF_PREDS,
    QF_TWIN_PREDS,
)
from relayrl.algorithms.sac.sac_learner import SACLearner
from relayrl.connectors.learner.add_next_observations_from_episodes_to_train_batch import insert_after_observations
from relayrl.core.columns import Columns
from relayrl.ops.q_learning import bootstrap_targets

ALPHA_PRIME = "alpha_prime"
_ALPHA_PRIME_MAX = 1e6


class CQLLearner(SACLearner):
    PER_MODULE_STATE = SACLearner.PER_MODULE_STATE + ("num_cql_updates", "log_alpha_prime")
    LOSS_COMPILES = False  # the loss branches on the update count (bc_iters)

    def build(self) -> None:
        self.log_alpha_prime: Dict[str, nn.Parameter] = {}
        self.num_cql_updates: Dict[str, int] = {}
        super().build()
        if self.config.add_default_connectors_to_learner_pipeline:
            insert_after_observations(self._learner_connector)

    def configure_optimizers_for_module(self, module_id: str, config=None) -> None:
        config = config or self.config
        super().configure_optimizers_for_module(module_id, config)
        self.num_cql_updates[module_id] = 0
        if config.lagrangian:
            param = nn.Parameter(torch.zeros((), device=self.device))
            self.log_alpha_prime[module_id] = param
            self._add_optimizer(module_id, ALPHA_PRIME, [param], config, "critic_lr")

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        log_alpha = self.curr_log_alpha[module_id]
        alpha = log_alpha.detach().exp()
        logp = fwd_out[LOGP_RESAMPLED]

        # Critics' Bellman targets (no gradient).
        next_values = fwd_out[Q_TARGET_NEXT]
        if not config.deterministic_backup:
            next_values = next_values - alpha * fwd_out[LOGP_NEXT_RESAMPLED]
        targets = bootstrap_targets(batch[Columns.REWARDS], batch[Columns.TERMINATEDS], next_values,
                                    gamma=config.gamma, n_step=1)

        # The conservative term per critic: log-sum-exp over sampled actions (importance-weighted) minus Q(s, a_data).
        random_density = -fwd_out[Q_RAND_REPEAT].new_tensor(module.action_space.shape[-1] * math.log(2.0))
        logps = (fwd_out[LOGPS_CURR_REPEAT], fwd_out[LOGPS_NEXT_REPEAT])
        alpha_prime = None
        if config.lagrangian:
            alpha_prime = self.log_alpha_prime[module_id].exp().clamp(0.0, _ALPHA_PRIME_MAX)
        critic_losses, cql_gaps, abs_td = {}, [], None
        for name, preds_key, twin in (("qf", QF_PREDS, False), ("qf_twin", QF_TWIN_PREDS, True)):
            if preds_key not in fwd_out:
                continue
            key = twin_key if twin else (lambda k: k)
            q_data = fwd_out[preds_key]
            td = q_data - targets
            sampled = torch.cat([fwd_out[key(Q_RAND_REPEAT)] - random_density,
                                 fwd_out[key(Q_CURR_REPEAT)] - logps[0], fwd_out[key(Q_NEXT_REPEAT)] - logps[1]], dim=1)
            gap = config.temperature * torch.logsumexp(sampled / config.temperature, dim=1).mean() - q_data.mean()
            conservative = config.min_q_weight * gap
            if alpha_prime is not None:
                conservative = alpha_prime.detach() * (conservative - config.lagrangian_thresh)
            critic_losses[name] = td.pow(2).mean() + conservative
            cql_gaps.append(gap.detach())
            abs_td = td.detach().abs() if abs_td is None else 0.5 * (abs_td + td.detach().abs())

        # Actor: behaviour cloning for bc_iters updates, then SAC's loss.
        if self.num_cql_updates[module_id] < config.bc_iters:
            dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
            actor_loss = (alpha * logp - dist.logp(batch[Columns.ACTIONS])).mean()
        else:
            actor_loss = (alpha * logp - fwd_out[Q_CURR]).mean()
        alpha_loss = -(log_alpha * (logp.detach() + self.target_entropy[module_id])).mean()
        total_loss = sum(critic_losses.values()) + actor_loss + alpha_loss
        stats = {**{f"{name}_loss": loss for name, loss in critic_losses.items()},
                 "cql_loss": torch.stack(cql_gaps).mean() * config.min_q_weight, "actor_loss": actor_loss,
                 "alpha_loss": alpha_loss, "alpha_value": alpha, "qf_mean": fwd_out[QF_PREDS].mean(),
                 "td_error_mean": abs_td.mean(), "total_loss": total_loss}
        if alpha_prime is not None:
            # Gradient ascent on alpha' of (gap - threshold): its loss reaches log alpha' only.
            gap = torch.stack(cql_gaps).mean() * config.min_q_weight
            alpha_prime_loss = -(alpha_prime * (gap - config.lagrangian_thresh))
            total_loss = total_loss + alpha_prime_loss
            stats.update({"alpha_prime_loss": alpha_prime_loss, "alpha_prime_value": alpha_prime.detach()})
        self.num_cql_updates[module_id] += 1
        self.keep_td_errors(module_id, batch, abs_td)
        self.log_stats(module_id, stats)
        return total_loss

    # -- state ---------------------------------------------------------------------------------------
    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state()
        state["num_cql_updates"] = dict(self.num_cql_updates)
        state["log_alpha_prime"] = {mid: float(p.detach()) for mid, p in self.log_alpha_prime.items()}
        return state

    def set_state(self, state):
        super().set_state(state)
        self.num_cql_updates.update({mid: int(v) for mid, v in state.get("num_cql_updates", {}).items()})
        with torch.no_grad():
            for mid, value in state.get("log_alpha_prime", {}).items():
                if mid in self.log_alpha_prime:
                    self.log_alpha_prime[mid].fill_(value)


CQLTorchLearner = CQLLearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["CQLLearner", "CQLTorchLearner"]
