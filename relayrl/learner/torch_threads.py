"""How many intra-op threads torch trains with in a process that runs a Learner (or learning policies)."""
import os

import torch


def limit_torch_threads(config) -> None:
    """Train with as many intra-op threads as the Learner has CPUs (RLlib's num_cpus_per_learner, "auto" = 1).

    Ray does the same for its actors (OMP_NUM_THREADS = the actor's CPUs). RL networks are small: extra
    threads buy little, and on a busy machine (env workers, other processes) they stall each other --
    measured 4-20x slower PPO updates with 2 threads on 2 shared cores (35x on CartPole under load, 2026-12-04;
    docs/learners.md#torch-threads). Setting OMP_NUM_THREADS or a number of CPUs opts out.
    """
    if "OMP_NUM_THREADS" in os.environ:
        return
    cpus = config.get("num_cpus_per_learner", "auto") if hasattr(config, "get") else "auto"
    threads = 1 if cpus in ("auto", None) else max(1, int(cpus))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
