"""Episode chunks with known contents for replay tests.

Step t of episode e: obs [e, t] (obs after the step: [e, t + 1]), action t, reward reward_of(e, t).
"""
import numpy as np

from relayrl.episodes.single_agent_episode import SingleAgentEpisode


def reward_of(e, t):
    return float(e * 100 + t + 1)


def make_chunk(e, t0, length, *, terminated=False, truncated=False, lookback=0, id_=None):
    """Steps t0 .. t0+length-1 of episode e, numpy'd, with `lookback` earlier steps in the lookback buffer."""
    lookback = min(lookback, t0)
    first = t0 - lookback
    observations = [np.array([e, t], np.float32) for t in range(first, t0 + length + 1)]
    actions = list(range(first, t0 + length))
    rewards = [reward_of(e, t) for t in range(first, t0 + length)]
    chunk = SingleAgentEpisode(id_ or f"ep{e}", observations=observations, actions=actions, rewards=rewards,
                               terminated=terminated, truncated=truncated, len_lookback_buffer=lookback,
                               t_started=t0)
    return chunk.to_numpy()


def expected_row(e, t, n, gamma, available, done=None):
    """(return, next t, steps, terminated, truncated) of an n-step transition from step t of episode e.

    available: steps of episode e stored so far; done: "terminated"/"truncated" if the episode ended there.
    """
    steps = min(n, available - t)
    ret = sum(gamma ** k * reward_of(e, t + k) for k in range(steps))
    at_end = t + steps == available
    return ret, t + steps, steps, at_end and done == "terminated", at_end and done == "truncated"
