"""Trajectory postprocessing of the old API stack (RLlib's `evaluation/postprocessing.py`): discounted returns,
advantages (plain or GAE) and the value bootstrap at a cut trajectory's end."""
import numpy as np

from relayrl.policy.sample_batch import SampleBatch


class Postprocessing:
    """Columns the postprocessors add."""

    ADVANTAGES = "advantages"
    VALUE_TARGETS = "value_targets"


def discount_cumsum(x, gamma: float) -> np.ndarray:
    """y[t] = x[t] + gamma * y[t+1] along axis 0 (y[-1] = x[-1])."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    running = np.zeros_like(x[0]) if len(x) else 0.0
    for t in range(len(x) - 1, -1, -1):  # one trajectory: a few hundred rows at most, so a plain loop is cheap
        running = x[t] + gamma * running
        out[t] = running
    return out


def compute_advantages(rollout: SampleBatch, last_r: float, gamma: float = 0.9, lambda_: float = 1.0,
                       use_gae: bool = True, use_critic: bool = True, rewards=None, vf_preds=None) -> SampleBatch:
    """Add `advantages` (and `value_targets`) to one trajectory `rollout`; returns it.

    use_gae: GAE(gamma, lambda_) over `vf_preds` with `last_r` as the value after the last step.
    Otherwise the discounted returns (bootstrapped with last_r), minus `vf_preds` if use_critic.
    """
    rewards = np.asarray(rollout[SampleBatch.REWARDS] if rewards is None else rewards, dtype=np.float64)
    if use_critic and vf_preds is None and SampleBatch.VF_PREDS not in rollout:
        raise KeyError("compute_advantages(use_critic=True) needs a `vf_preds` column (or vf_preds=...); "
                       "pass use_critic=False for plain discounted returns.")
    if use_gae and not use_critic:
        raise ValueError("compute_advantages: can't use GAE without a value function (use_gae=True needs "
                         "use_critic=True).")
    if use_critic:
        vf_preds = np.asarray(rollout[SampleBatch.VF_PREDS] if vf_preds is None else vf_preds, dtype=np.float64)
    if use_gae:
        values = np.concatenate([vf_preds, [last_r]])
        deltas = rewards + gamma * values[1:] - values[:-1]
        advantages = discount_cumsum(deltas, gamma * lambda_)
        rollout[Postprocessing.ADVANTAGES] = advantages.astype(np.float32)
        rollout[Postprocessing.VALUE_TARGETS] = (advantages + vf_preds).astype(np.float32)
        return rollout
    returns = discount_cumsum(np.concatenate([rewards, [last_r]]), gamma)[:-1]
    if use_critic:
        rollout[Postprocessing.ADVANTAGES] = (returns - vf_preds).astype(np.float32)
        rollout[Postprocessing.VALUE_TARGETS] = returns.astype(np.float32)
    else:
        rollout[Postprocessing.ADVANTAGES] = returns.astype(np.float32)
        rollout[Postprocessing.VALUE_TARGETS] = np.zeros_like(returns, dtype=np.float32)
    return rollout


def compute_bootstrap_value(sample_batch: SampleBatch, policy) -> SampleBatch:
    """`values_bootstrapped` = vf_preds shifted by one, ending in 0 (terminated) or V(last new_obs) (cut)."""
    if sample_batch[SampleBatch.TERMINATEDS][-1]:
        last_r = 0.0
    else:
        input_dict = sample_batch.get_single_step_input_dict(getattr(policy, "view_requirements", None), "last")
        last_r = float(np.asarray(policy._value(**input_dict)).reshape(-1)[0])
    vf_preds = np.asarray(sample_batch[SampleBatch.VF_PREDS])
    squeezed = vf_preds.reshape(len(vf_preds))
    bootstrapped = np.concatenate([squeezed[1:], [last_r]]).astype(np.float32)
    sample_batch[SampleBatch.VALUES_BOOTSTRAPPED] = bootstrapped.reshape(vf_preds.shape)
    return sample_batch


def compute_gae_for_sample_batch(policy, sample_batch: SampleBatch, other_agent_batches=None,
                                 episode=None) -> SampleBatch:
    """PPO/A2C's postprocess_fn: bootstrap the cut end, then advantages from the policy's config
    (`gamma`, `lambda`, `use_gae`, `use_critic`)."""
    sample_batch = compute_bootstrap_value(sample_batch, policy)
    vf_preds = np.asarray(sample_batch[SampleBatch.VF_PREDS])
    column_shaped = vf_preds.ndim == 2
    config = policy.config
    batch = compute_advantages(
        sample_batch, float(np.asarray(sample_batch[SampleBatch.VALUES_BOOTSTRAPPED]).reshape(-1)[-1]),
        config["gamma"], config.get("lambda", 1.0), use_gae=config.get("use_gae", True),
        use_critic=config.get("use_critic", True), vf_preds=vf_preds.reshape(-1),
        rewards=np.asarray(sample_batch[SampleBatch.REWARDS]).reshape(-1))
    if column_shaped:
        batch[Postprocessing.ADVANTAGES] = batch[Postprocessing.ADVANTAGES][:, None]
    return batch


__all__ = [
    "Postprocessing",
    "compute_advantages",
    "compute_bootstrap_value",
    "compute_gae_for_sample_batch",
    "discount_cumsum",
]
