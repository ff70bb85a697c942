"""`PPOTorchPolicy`: RLlib's old-stack PPO policy (`ray.rllib.algorithms.ppo.ppo_torch_policy`), built with
relayrl's policy template and mixins.

The loss is RLlib's: the clipped surrogate (`clip_param`), the squared value error clipped to
[0, `vf_clip_param`] times `vf_loss_coeff`, minus `entropy_coeff` times the entropy, plus `kl_coeff` times the
KL to the sampling distribution (`use_kl_loss`; `update_kl(kl)` adapts `kl_coeff` toward `kl_target`). Trajectories
get GAE advantages (compute_gae_for_sample_batch); each step records `vf_preds` (ValueNetworkMixin).
Extend it with `PPOTorchPolicy.with_updates(loss_fn=..., ...)`.
"""
import torch

from relayrl.algorithms.ppo.ppo_policy_config import ppo_policy_defaults, validate_ppo_policy_config
from relayrl.ops.explained_variance import explained_variance
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.postprocessing import Postprocessing, compute_gae_for_sample_batch
from relayrl.policy.sample_batch import SampleBatch
from relayrl.policy.torch_mixins import EntropyCoeffSchedule, KLCoeffMixin, LearningRateSchedule, ValueNetworkMixin


def ppo_surrogate_loss(policy, model, dist_class, train_batch):
    """The PPO loss (scalar); the parts go to `model.tower_stats` for the stats (as RLlib keeps them)."""
    logits, state = model.from_batch(train_batch)
    curr_dist = dist_class(logits, model)
    mean = _masked_mean(train_batch, logits, state)
    prev_dist = dist_class(train_batch[SampleBatch.ACTION_DIST_INPUTS], model)
    ratio = torch.exp(curr_dist.logp(train_batch[SampleBatch.ACTIONS]) - train_batch[SampleBatch.ACTION_LOGP])
    advantages = train_batch[Postprocessing.ADVANTAGES]
    clip = policy.config["clip_param"]
    surrogate = torch.min(advantages * ratio, advantages * torch.clamp(ratio, 1 - clip, 1 + clip))
    entropy = curr_dist.entropy()
    if policy.config["use_critic"]:
        values = model.value_function()
        vf_error = (values - train_batch[Postprocessing.VALUE_TARGETS]).pow(2)
        vf_loss = torch.clamp(vf_error, 0, policy.config["vf_clip_param"])
        mean_vf_loss = mean(vf_loss)
    else:
        values = vf_loss = mean_vf_loss = torch.zeros((), device=surrogate.device)
    total = mean(-surrogate + policy.config["vf_loss_coeff"] * vf_loss - policy.entropy_coeff * entropy)
    if policy.config["use_kl_loss"]:
        mean_kl = mean(prev_dist.kl(curr_dist))
        total = total + policy.kl_coeff * mean_kl
    else:
        mean_kl = torch.zeros((), device=surrogate.device)
    model.tower_stats = {
        "total_loss": total, "policy_loss": mean(-surrogate), "vf_loss": mean_vf_loss, "kl": mean_kl,
        "entropy": mean(entropy),
        "vf_explained_var": explained_variance(train_batch[Postprocessing.VALUE_TARGETS], values),
    }
    return total


def kl_and_loss_stats(policy, train_batch):
    """RLlib's PPO stats: the loss parts of the last loss call plus the current coefficients and lr. A loss
    given by with_updates(loss_fn=...) that records no parts gets the coefficients only."""
    stats = {k: v.detach() for k, v in getattr(policy.model, "tower_stats", {}).items()}
    return {**stats, "cur_kl_coeff": policy.kl_coeff, "cur_lr": policy.cur_lr, "entropy_coeff": policy.entropy_coeff}


def setup_mixins(policy, obs_space, action_space, config):
    """before_loss_init: the mixins' state (after the base policy built the model and optimizer)."""
    ValueNetworkMixin.__init__(policy, config)
    LearningRateSchedule.__init__(policy, config["lr"], config["lr_schedule"])
    EntropyCoeffSchedule.__init__(policy, config["entropy_coeff"], config["entropy_coeff_schedule"])
    KLCoeffMixin.__init__(policy, config)


def _masked_mean(train_batch, logits, state):
    """torch.mean, or for a recurrent model on zero-padded sequences the mean over the valid steps only. The
    use_lstm models answer one row per real step (rnn_sequencing.add_seq_lens): sum(seq_lens) rows, no mask."""
    seq_lens = train_batch.get(SampleBatch.SEQ_LENS) if state else None
    if (seq_lens is None or len(seq_lens) == 0 or logits.shape[0] % len(seq_lens)
            or int(seq_lens.sum()) == logits.shape[0]):
        return torch.mean
    max_seq_len = logits.shape[0] // len(seq_lens)
    mask = (torch.arange(max_seq_len, device=logits.device)[None, :] < seq_lens.reshape(-1, 1)).reshape(-1)
    num_valid = mask.sum()
    return lambda t: torch.sum(t[mask]) / num_valid


PPOTorchPolicy = build_policy_class(
    "PPOTorchPolicy", "torch",
    get_default_config=ppo_policy_defaults,
    before_init=validate_ppo_policy_config,
    loss_fn=ppo_surrogate_loss,
    stats_fn=kl_and_loss_stats,
    postprocess_fn=compute_gae_for_sample_batch,
    before_loss_init=setup_mixins,
    mixins=[ValueNetworkMixin, LearningRateSchedule, EntropyCoeffSchedule, KLCoeffMixin])

__all__ = ["PPOTorchPolicy", "kl_and_loss_stats", "ppo_surrogate_loss", "setup_mixins"]
