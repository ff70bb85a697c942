"""`PPOTFPolicy`: RLlib's old-stack PPO policy in TensorFlow (`ray.rllib.algorithms.ppo.ppo_tf_policy`), built
with `build_tf_policy` and the TF mixins. Needs TensorFlow: `pip install "relayrl[tf]"`.

The same loss, postprocessing, stats and defaults as PPOTorchPolicy (ppo_torch_policy.py says what they are),
in TF2: eager by default, the gradient step traced with `eager_tracing=True`. What changes between steps
(`kl_coeff`, `entropy_coeff`, the learning rate) lives in `tf.Variable`s, so a traced step sees new values.
The seed's `PPOTFPolicy.with_updates(name=..., loss_fn=...)` builds a variant.
"""
try:
    import tensorflow as tf
except ImportError:
    raise ImportError('relayrl.algorithms.ppo.ppo_tf_policy (PPOTFPolicy) needs TensorFlow: pip install '
                      '"relayrl[tf]" (tensorflow-cpu), or use PPOTorchPolicy '
                      '(relayrl.algorithms.ppo.ppo_torch_policy).') from None

from relayrl.algorithms.ppo.ppo_policy_config import ppo_policy_defaults, validate_ppo_policy_config
from relayrl.policy.postprocessing import Postprocessing, compute_gae_for_sample_batch
from relayrl.policy.sample_batch import SampleBatch
from relayrl.policy.tf_mixins import EntropyCoeffSchedule, KLCoeffMixin, LearningRateSchedule, ValueNetworkMixin
from relayrl.policy.tf_policy_template import build_tf_policy
from relayrl.policy.tf_utils import explained_variance


def ppo_surrogate_loss(policy, model, dist_class, train_batch):
    """The PPO loss (scalar); its parts go to `policy.loss_obj` for the stats (the seed's kl_and_loss_stats)."""
    logits, state = model.from_batch(train_batch)
    curr_dist = dist_class(logits, model)
    mean = _masked_mean(train_batch, logits, state)
    prev_dist = dist_class(train_batch[SampleBatch.ACTION_DIST_INPUTS], model)
    ratio = tf.exp(curr_dist.logp(train_batch[SampleBatch.ACTIONS]) - train_batch[SampleBatch.ACTION_LOGP])
    advantages = train_batch[Postprocessing.ADVANTAGES]
    clip = policy.config["clip_param"]
    surrogate = tf.minimum(advantages * ratio, advantages * tf.clip_by_value(ratio, 1 - clip, 1 + clip))
    entropy = curr_dist.entropy()
    if policy.config["use_critic"]:
        values = model.value_function()
        vf_loss = tf.clip_by_value(tf.square(values - train_batch[Postprocessing.VALUE_TARGETS]), 0.0,
                                   policy.config["vf_clip_param"])
        mean_vf_loss = mean(vf_loss)
    else:
        values = vf_loss = mean_vf_loss = tf.constant(0.0)
    total = mean(-surrogate + policy.config["vf_loss_coeff"] * vf_loss - policy.entropy_coeff * entropy)
    if policy.config["use_kl_loss"]:
        mean_kl = mean(prev_dist.kl(curr_dist))
        total = total + policy.kl_coeff * mean_kl
    else:
        mean_kl = tf.constant(0.0)
    policy.loss_obj = _LossParts(total, mean(-surrogate), mean_vf_loss, mean_kl, mean(entropy))
    policy._value_fn_out = values
    return total


class _LossParts:
    """RLlib's `policy.loss_obj`: the loss and its means, read by the stats."""

    def __init__(self, loss, mean_policy_loss, mean_vf_loss, mean_kl, mean_entropy):
        self.loss, self.mean_policy_loss, self.mean_vf_loss = loss, mean_policy_loss, mean_vf_loss
        self.mean_kl, self.mean_entropy = mean_kl, mean_entropy


def kl_and_loss_stats(policy, train_batch):
    """RLlib's PPO stats (the seed's kl_and_loss_stats, plus entropy_coeff). A loss given by
    with_updates(loss_fn=...) that sets no `policy.loss_obj` gets the coefficients only."""
    coefficients = {
        "cur_kl_coeff": tf.cast(policy.kl_coeff, tf.float64),
        "cur_lr": tf.cast(policy.cur_lr, tf.float64),
        "entropy_coeff": tf.cast(policy.entropy_coeff, tf.float64),
    }
    loss = getattr(policy, "loss_obj", None)
    if loss is None:
        return coefficients
    return {
        **coefficients,
        "total_loss": loss.loss,
        "policy_loss": loss.mean_policy_loss,
        "vf_loss": loss.mean_vf_loss,
        "vf_explained_var": explained_variance(train_batch[Postprocessing.VALUE_TARGETS], policy._value_fn_out),
        "kl": loss.mean_kl,
        "entropy": loss.mean_entropy,
    }


def setup_mixins(policy, obs_space, action_space, config):
    """before_loss_init, as the seed's setup_mixins (plus the entropy coefficient's schedule)."""
    ValueNetworkMixin.__init__(policy, obs_space, action_space, config)
    KLCoeffMixin.__init__(policy, config)
    EntropyCoeffSchedule.__init__(policy, config["entropy_coeff"], config["entropy_coeff_schedule"])
    LearningRateSchedule.__init__(policy, config["lr"], config["lr_schedule"])


def _masked_mean(train_batch, logits, state):
    """tf.reduce_mean, or for a recurrent model on zero-padded sequences the mean over the valid steps only. The
    use_lstm models answer one row per real step (rnn_sequencing.add_seq_lens): sum(seq_lens) rows, all valid."""
    seq_lens = train_batch.get(SampleBatch.SEQ_LENS) if state else None
    if seq_lens is None:
        return tf.reduce_mean
    rows = tf.shape(logits)[0]
    padded = tf.not_equal(tf.reduce_sum(tf.cast(seq_lens, tf.int32)), rows)
    max_seq_len = rows // tf.shape(seq_lens)[0]
    mask = tf.cond(padded, lambda: tf.reshape(tf.sequence_mask(seq_lens, max_seq_len), [-1]),
                   lambda: tf.ones([rows], tf.bool))
    return lambda t: tf.reduce_mean(tf.boolean_mask(t, mask))


PPOTFPolicy = build_tf_policy(
    name="PPOTFPolicy",
    get_default_config=ppo_policy_defaults,
    before_init=validate_ppo_policy_config,
    loss_fn=ppo_surrogate_loss,
    stats_fn=kl_and_loss_stats,
    postprocess_fn=compute_gae_for_sample_batch,
    before_loss_init=setup_mixins,
    mixins=[ValueNetworkMixin, LearningRateSchedule, EntropyCoeffSchedule, KLCoeffMixin])

# RLlib 2.x's names for the same class (its TF1-graph and TF2-eager variants; relayrl runs both eagerly)
PPOTF1Policy = PPOTF2Policy = PPOTFPolicy

__all__ = ["PPOTF1Policy", "PPOTF2Policy", "PPOTFPolicy", "kl_and_loss_stats", "ppo_surrogate_loss", "setup_mixins"]
