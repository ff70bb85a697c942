"""How many intra-op threads torch trains with in a process that runs a Learner (or learning policies).

- `OMP_NUM_THREADS` set: torch already follows it (Ray sets it in its actors to the CPUs they reserved).
- `num_cpus_per_learner` a number: that many.
- "auto" (the default), remote Learner actors (num_learners > 0): 1, RLlib's rule (the actor reserved one CPU).
- "auto", the Learner in the algorithm's own process (num_learners=0): the cores this process may use
  (`os.sched_getaffinity`, or the CPUs Ray assigned when it runs in a Ray worker such as a Tune trial), less the
  CPUs reserved for remote EnvRunners, which sample on the same machine while it trains. Embedded runners sample
  between updates, in the same process, so sampling and learning take turns on those cores and neither
  oversubscribes them. PPO on Pong on 2 cores: 1.6x the env steps/s with 2 threads (docs/atari.md).

The line saying how many threads were picked is logged once per process (debug level).
"""
import logging
import os
import sys

import torch

logger = logging.getLogger("relayrl")


def limit_torch_threads(config) -> None:
    """Set torch's intra-op threads for a process that trains (see the module docstring)."""
    threads = learner_threads(config)
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
        logger.debug("relayrl: the Learner trains with %d torch threads", threads)


def learner_threads(config):
    """The intra-op thread count for a Learner built from `config`; None: leave torch as it is (OMP_NUM_THREADS)."""
    if "OMP_NUM_THREADS" in os.environ:
        return None
    get = config.get if hasattr(config, "get") else (lambda key, default=None: default)
    cpus = get("num_cpus_per_learner", "auto")
    if cpus not in ("auto", None):
        return max(1, int(cpus))
    if (get("num_learners", 0) or 0) > 0:
        return 1
    runners = (get("num_env_runners", 0) or 0) * float(get("num_cpus_per_env_runner", 1) or 0)
    return max(1, int(usable_cpus() - runners))


def usable_cpus() -> int:
    """CPUs this process may run on: Ray's assignment inside a Ray worker, else the affinity mask."""
    assigned = _ray_assigned_cpus()
    if assigned is not None:
        return max(1, int(assigned))
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _ray_assigned_cpus():
    """The CPUs Ray reserved for this worker (a Tune trial, an actor), or None outside Ray workers.

    Only looked up when ray is already imported: relayrl never imports it for this."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    try:
        context = ray.get_runtime_context()
        if context.worker.mode != ray.WORKER_MODE:
            return None  # the driver: not limited by Ray
        return context.get_assigned_resources().get("CPU")
    except Exception:
        return None
