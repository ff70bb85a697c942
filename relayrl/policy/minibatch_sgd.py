"""Minibatch SGD for the old stack's `train_one_step` (RLlib's `utils/sgd.py`): `num_epochs` (`num_sgd_iter`)
passes over each policy's train batch in shuffled minibatches of `minibatch_size` (`sgd_minibatch_size`), one
`learn_on_batch` per minibatch; the learner stats are averaged over all of them.

Batches with recurrent state (`state_in_*` or `seq_lens` columns) are neither shuffled nor cut: each epoch
learns on the whole batch (RLlib cuts them at sequence boundaries; relayrl does not, yet).
"""
import random
from typing import Any

import numpy as np

from relayrl.policy.model_policy import LEARNER_STATS_KEY
from relayrl.policy.sample_batch import SampleBatch


def minibatches(samples: SampleBatch, minibatch_size: int | None):
    """The batch shuffled and cut into `minibatch_size` rows (the last one may be shorter), in random order;
    the whole batch when minibatch_size is None/0 or the batch has recurrent state."""
    recurrent = SampleBatch.SEQ_LENS in samples or any(k.startswith("state_in_") for k in samples)
    if not minibatch_size or recurrent:
        yield samples
        return
    samples.shuffle()
    slices = [(i, min(i + minibatch_size, samples.count)) for i in range(0, samples.count, minibatch_size)]
    random.shuffle(slices)
    for start, end in slices:
        yield samples.slice(start, end)


def do_minibatch_sgd(samples, policies: dict[str, Any], num_epochs: int, minibatch_size: int | None) -> dict:
    """{policy_id: the mean of its learn_on_batch results over all minibatches} (RLlib's do_minibatch_sgd)."""
    samples = samples.as_multi_agent()
    info = {}
    for policy_id, policy in policies.items():
        if policy_id not in samples.policy_batches:
            continue
        batch = samples.policy_batches[policy_id]
        results = [policy.learn_on_batch(minibatch) for _ in range(num_epochs)
                   for minibatch in minibatches(batch, minibatch_size)]
        info[policy_id] = _mean_results([r if isinstance(r, dict) else {} for r in results])
    return info


def _mean_results(results: list[dict]) -> dict:
    """The last result, with its learner stats replaced by their means over all results (numbers only)."""
    last = dict(results[-1])
    stats = [r.get(LEARNER_STATS_KEY, {}) for r in results]
    if stats[-1]:
        last[LEARNER_STATS_KEY] = {k: float(np.mean([s[k] for s in stats if k in s])) if _is_number(v) else v
                                   for k, v in stats[-1].items()}
    return last


def _is_number(value) -> bool:
    return np.ndim(value) == 0 and isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


__all__ = ["do_minibatch_sgd", "minibatches"]
