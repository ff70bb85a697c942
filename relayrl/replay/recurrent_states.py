"""The recurrent state before each stored step, read from the `state_out` the sampler recorded (R2D2's
stored state).

Step j of a chunk starts from the state_out of step j-1; a chunk's first step from the state_out kept in its
lookback (a chunk cut from a running episode), or, at an episode's first step, from the module's initial
state. The buffer has no module, so it stores zeros there and flags the step (`state_is_initial`); the
Learner puts the module's initial state in those rows.
"""
from typing import List, Optional, Tuple

import numpy as np

from relayrl.core.columns import Columns
from relayrl.replay import nested


def has_states(episode) -> bool:
    return Columns.STATE_OUT in getattr(episode, "extra_model_outputs", {})


def states_before_steps(episode) -> Tuple[Optional[list], Optional[np.ndarray]]:
    """(nested state (L, ...) per leaf before each of the chunk's L steps, flags of steps that start from the
    initial state (L,)); (None, None) if the chunk has no state_out (a stateless module)."""
    if not has_states(episode):
        return None, None
    outs = episode.get_extra_model_outputs(Columns.STATE_OUT)  # (L, ...) per leaf: the state after each step
    leaves, spec = nested.flatten(outs)
    leaves = [np.asarray(leaf, np.float32) for leaf in leaves]
    initial = np.zeros(len(leaves[0]), bool)
    if episode.t_started == 0:
        first = [np.zeros_like(leaf[:1]) for leaf in leaves]
        initial[0] = True
    else:
        try:
            lookback = episode.get_extra_model_outputs(Columns.STATE_OUT, -1, neg_index_as_lookback=True)
        except IndexError:
            raise ValueError(
                f"Replay buffer: episode chunk {episode.id_} starts at t={episode.t_started} but keeps no "
                "`state_out` in its lookback, so the state before its first step is lost. Fix: "
                "config.env_runners(episode_lookback_horizon=1) or more for stateful RLModules.") from None
        first = [np.asarray(leaf, np.float32)[None] for leaf in nested.flatten_like(lookback, spec)]
    return nested.unflatten(spec, [np.concatenate([f, leaf[:-1]]) for f, leaf in zip(first, leaves)]), initial


def check_all_or_none(chunks: List) -> bool:
    """Whether the chunks carry states; a mix (a stateful and a stateless module in one buffer) raises."""
    flags = {has_states(ep) for ep in chunks}
    if len(flags) > 1:
        raise ValueError("Replay buffer: some episodes carry a recurrent `state_out` and some do not. Use one buffer "
                         "per module (a multi-agent config gets one per module).")
    return flags.pop() if flags else False


__all__ = ["states_before_steps", "check_all_or_none", "has_states"]
