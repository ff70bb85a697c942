"""Ray Tune integration: relayrl algorithms are Tune Trainables, `reset_config` for PBT.

`tune.Tuner(PPO, param_space=config, ...)` works as with RLlib: once ray.tune is imported,
every Algorithm class derives from `ray.tune.Trainable` (see trainable_base.py for how,
without importing ray for users who never use it). Nothing here imports ray at import time.
"""
from relayrl.tune.trainable_base import become_tune_trainable, is_tune_trainable

__all__ = ["become_tune_trainable", "is_tune_trainable"]
