"""OpenMP's wait policy for torch's intra-op threads: passive, so that threads waiting for each other sleep.

torch's OpenMP runtime reads OMP_WAIT_POLICY once, when torch loads. With the default (spinning), two Learner
threads stall when other processes hold the cores. PPO on Pong with 2 threads under two busy processes (2 cores,
2026-12-05) made ~205 env steps/s spinning, ~460 passive, and ~460 with one thread. On the quiet machine, passive
waits cost ~15% against spinning (~960 vs ~1,130) and are still 1.5x one thread (~640). So `import relayrl` sets
passive waits where the user set none and torch is not loaded yet. Only then (`PASSIVE_WAIT`) does a Learner take
more than one thread by default (relayrl/learner/torch_threads.py). The variable passes to child processes (Ray's
workers) too.
"""
import os
import sys


def _passive_wait_in_effect() -> bool:
    policy = os.environ.get("OMP_WAIT_POLICY")
    if policy is not None:
        return policy.strip().upper() == "PASSIVE"
    if TORCH_LOADED_FIRST:  # its OpenMP runtime has read its settings: waits spin
        return False
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True


# torch was imported before relayrl with no wait policy set: the one case relayrl could not choose passive waits
# (relayrl/learner/torch_threads.py says so once when it costs an image module its threads).
TORCH_LOADED_FIRST = "torch" in sys.modules and "OMP_WAIT_POLICY" not in os.environ
PASSIVE_WAIT = _passive_wait_in_effect()
