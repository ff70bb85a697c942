"""The old stack's training_step helpers (RLlib's `execution/rollout_ops.py` and `execution/train_ops.py`)."""
from typing import Any

import numpy as np

from relayrl.metrics import LEARNER_RESULTS, NUM_ENV_STEPS_TRAINED_LIFETIME
from relayrl.metrics.keys import (
    LEARN_ON_BATCH_TIMER,
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_TRAINED,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_TRAINED,
    WORKER_UPDATE_TIMER,
)
from relayrl.policy.minibatch_sgd import do_minibatch_sgd
from relayrl.policy.sample_batch import concat_samples
from relayrl.policy.torch_policy import LEARNER_STATS_KEY


def synchronous_parallel_sample(*, worker_set=None, max_agent_steps: int | None = None,
                                max_env_steps: int | None = None, concat: bool = True, **kwargs):
    """sample() from all runners at once, repeated until `max_env_steps` (or agent steps) are in; one round if
    neither is given."""
    if worker_set is None:
        raise ValueError("synchronous_parallel_sample needs worker_set=algo.workers (or algo.env_runner_group).")
    batches, steps = [], 0
    limit = max_agent_steps if max_agent_steps is not None else max_env_steps
    while True:
        batch = worker_set.sample()
        batches.append(batch)
        steps += batch.agent_steps() if max_agent_steps is not None else batch.env_steps()
        if limit is None or steps >= limit:
            break
    return concat_samples(batches) if concat else batches


def train_one_step(algorithm, train_batch, policies_to_train: list[str] | None = None) -> dict[str, Any]:
    """learn_on_batch of the local runner's trainable policies; {policy_id: results}. Logs the learner stats.

    With `num_epochs` (`num_sgd_iter`) > 1 or a `minibatch_size` (`sgd_minibatch_size`), as RLlib's: that many
    passes of shuffled minibatches, one learn_on_batch each, the stats averaged (minibatch_sgd.py)."""
    worker = algorithm.workers.local_worker()
    batch = train_batch.as_multi_agent()
    trainable = policies_to_train or worker.policies_to_train()
    num_epochs = getattr(algorithm.config, "num_epochs", 1) or 1
    minibatch_size = getattr(algorithm.config, "minibatch_size", None)
    if num_epochs > 1 or minibatch_size:
        policies = {pid: worker.policy_map[pid] for pid in batch.policy_batches if pid in trainable}
        info = do_minibatch_sgd(batch, policies, num_epochs, minibatch_size)
    else:
        info = {pid: worker.policy_map[pid].learn_on_batch(b) for pid, b in batch.policy_batches.items()
                if pid in trainable}
    info = {pid: result if isinstance(result, dict) else {} for pid, result in info.items()}  # a policy may return None
    for pid, result in info.items():
        # a template policy's stats are under "learner_stats"; a hand-written one may return them at the top
        source = result.get(LEARNER_STATS_KEY, result)
        stats = {k: v for k, v in source.items() if np.ndim(v) == 0 and isinstance(v, (int, float, np.number))}
        algorithm.metrics.log_dict(stats, key=(LEARNER_RESULTS, pid), window=1)
    counters = algorithm._counters
    counters[NUM_ENV_STEPS_TRAINED_LIFETIME] = counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0) + batch.env_steps()
    return info


multi_gpu_train_one_step = train_one_step


def standardize_fields(samples, fields: list[str]):
    """Each field of each policy's batch to mean 0, std 1 (in place); returns `samples`."""
    is_single = not hasattr(samples, "policy_batches")
    batches = [samples] if is_single else samples.policy_batches.values()
    for batch in batches:
        for field in fields:
            if field in batch:
                values = np.asarray(batch[field], dtype=np.float32)
                batch[field] = (values - values.mean()) / max(1e-4, values.std())
    return samples


__all__ = [
    "LEARNER_STATS_KEY",
    "LEARN_ON_BATCH_TIMER",
    "NUM_AGENT_STEPS_SAMPLED",
    "NUM_AGENT_STEPS_TRAINED",
    "NUM_ENV_STEPS_SAMPLED",
    "NUM_ENV_STEPS_TRAINED",
    "WORKER_UPDATE_TIMER",
    "multi_gpu_train_one_step",
    "standardize_fields",
    "synchronous_parallel_sample",
    "train_one_step",
]
