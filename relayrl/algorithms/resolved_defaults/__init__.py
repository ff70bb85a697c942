"""Defaults resolved when an algorithm is built, from the rest of its config: the fast path where it is safe, and the
settings a stateful module learns with.

A config's defaults are fixed values (RLlib's, or relayrl's measured ones). A few are better chosen from the rest of
the run: the env's own vector env is faster where nothing in the run needs SYNC's separate envs (vector_mode.py),
and a stateful module learns with other sequence settings than a feed-forward one (stateful_module.py). Each
resolver changes only options the user did not set (`AlgorithmConfig.is_given`) and returns a line saying what it
chose; the Algorithm logs each line once per process (the CLI shows them under its header). Resolving a resolved
config changes nothing, so a config copied from a built algorithm, a checkpoint or a Tune trial resolves the same; a build
first forgets what an earlier build resolved (forget_resolved_defaults), so a copy changed since resolves afresh.
"""
import logging
from typing import List

from relayrl.algorithms.resolved_defaults.stateful_module import (apply_stateful_module_defaults,
                                                                  forget_stateful_module_defaults)
from relayrl.algorithms.resolved_defaults.vector_mode import forget_vector_mode, pick_vector_mode

logger = logging.getLogger("relayrl")

RESOLVERS = (pick_vector_mode, apply_stateful_module_defaults)
FORGETTERS = (forget_vector_mode, forget_stateful_module_defaults)
_said: set = set()  # lines logged in this process


def resolve_defaults(config, *, log: bool = True) -> List[str]:
    """Apply the run-dependent defaults to `config` (unfrozen, validated); the lines saying what changed.

    `log`: log each line once per process (the CLI shows them itself)."""
    notes = [note for resolve in RESOLVERS for note in [resolve(config)] if note]
    for note in notes:
        if log and note not in _said:
            _said.add(note)
            logger.warning("relayrl: %s", note)
    return notes


def forget_resolved_defaults(config) -> None:
    """Put back the defaults where an earlier build resolved values (`algo.config.copy()`), before the config is
    checked and resolved afresh: a copy changed since (its envs, batch, horizon, use_lstm) gets the values that fit
    it, and failed no check on values the user never set. Values the user set, or a checkpoint holds, stay."""
    for forget in FORGETTERS:
        forget(config)
