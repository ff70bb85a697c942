"""Side work that must not move a seeded run's random draws (building and running evaluation EnvRunners).

A seeded training run draws from Python's `random`, numpy's global generator and torch's CPU generator
(weight initialisation, exploration, the runners' numpy samplers are seeded from torch). Building an evaluation
runner initialises a module and an evaluation samples with it; inside `isolated_global_rngs()` those draws come
from the same generators but leave them as they were, so a run with evaluation trains exactly as one without.
Only for work in the training thread: a block in another thread would reset draws the training thread made
meanwhile (parallel evaluation does not use it).
"""
import contextlib
import random

import numpy as np
import torch


@contextlib.contextmanager
def isolated_global_rngs():
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):
            yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
