"""How many intra-op threads torch trains with in a process that runs a Learner (or learning policies)."""
import logging
import math
import os

import torch

from relayrl.modules.row_threads import MAX_ROW_THREADS, set_row_threads

logger = logging.getLogger("relayrl")

# The most threads "auto" gives an image module; measured on 2 cores only (docs/learners.md#torch-threads).
MAX_IMAGE_THREADS = 4


def limit_torch_threads(config, spaces=None) -> None:
    """Train with as many intra-op threads as the Learner has CPUs (RLlib's num_cpus_per_learner).

    "auto": one thread, except for a module that sees images when OpenMP's waits are passive
    (relayrl/omp_wait_policy.py). Then it gets the cores this process may use, at most MAX_IMAGE_THREADS.
    Ray does the same for its actors (OMP_NUM_THREADS = the actor's CPUs). The networks of vector tasks are small:
    a second thread buys little there, and when other processes hold the cores spinning threads stall each other
    (35x slower PPO updates on CartPole under load, 2026-12-04; docs/learners.md#torch-threads). A CNN's update
    gains: PPO on Pong, 2 cores, 1.5x the env steps/s with 2 threads on a quiet machine, and as fast as one thread
    under load with passive waits. Setting OMP_NUM_THREADS or a number of CPUs opts out.
    With "auto" and one torch thread, passes split by rows (CQL's critics) run on the same cores' worth of Python
    threads (relayrl/modules/row_threads.py): one meeting a pass, not one an op.
    """
    if "OMP_NUM_THREADS" in os.environ:
        return
    cpus = config.get("num_cpus_per_learner", "auto") if hasattr(config, "get") else "auto"
    auto = cpus in ("auto", None)
    threads = auto_threads(spaces) if auto else max(1, math.floor(cpus))  # (0.5 CPUs: 1 thread)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    # One torch thread, "auto": big row-chunked passes (CQL's critics) share the cores on Python threads instead.
    set_row_threads(min(usable_cores(), MAX_ROW_THREADS) if auto and threads == 1 else 1)


def auto_threads(spaces) -> int:
    """num_cpus_per_learner="auto": see limit_torch_threads."""
    from relayrl.omp_wait_policy import PASSIVE_WAIT, TORCH_LOADED_FIRST

    if not sees_images(spaces):
        return 1
    threads = max(1, min(usable_cores(), MAX_IMAGE_THREADS))
    if PASSIVE_WAIT:
        return threads
    if TORCH_LOADED_FIRST and threads > 1:
        _say_once(f"the Learner of this image module trains with 1 torch thread, not {threads}: torch was imported "
                  f"before relayrl, so OpenMP's waits spin and more threads stall when other processes hold the "
                  f"cores. Import relayrl before torch (or start Python with OMP_WAIT_POLICY=PASSIVE) for {threads} threads, or "
                  f"set num_cpus_per_learner.")
    return 1


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_said: set = set()  # lines logged in this process


def _say_once(line: str) -> None:
    if line not in _said:
        _said.add(line)
        logger.warning("relayrl: %s", line)


def sees_images(spaces) -> bool:
    """Whether any module's observation space is an image (H, W, C) Box: its default encoder is a CNN."""
    from relayrl.modules.encoders import is_image_space

    return any(isinstance(pair, tuple) and pair and is_image_space(pair[0]) for pair in (spaces or {}).values())
