"""RLlib's old `horizon`, `soft_horizon` and `no_done_at_end` as gymnasium wrappers around each sub-env.

- `horizon=N`: an episode ends after N steps with truncated=True (like gymnasium's TimeLimit).
- `soft_horizon=True`: at the horizon the episode ends (metrics, value bootstrap) but the env is not reset:
  the vector env's auto-reset gets the last observation back and the next episode goes on from there.
- `no_done_at_end=True`: terminated=True is reported as truncated=True, so value targets bootstrap.

The wrappers are added only when one of the options is set; `foreach_env` and `env.unwrapped` see the
user's env (`user_env`).
"""
from typing import Callable, Optional

import gymnasium as gym


class EpisodeLimits(gym.Wrapper):
    """One sub-env under horizon / soft_horizon / no_done_at_end (see the module docstring)."""

    def __init__(self, env: gym.Env, *, horizon: Optional[int], soft_horizon: bool, no_done_at_end: bool):
        super().__init__(env)
        self.horizon, self.soft_horizon, self.no_done_at_end = horizon, soft_horizon, no_done_at_end
        self._steps = 0
        self._continue_from = None  # (obs, info) the next reset() returns instead of resetting (soft horizon)

    def reset(self, *, seed=None, options=None):
        self._steps = 0
        if self._continue_from is not None and seed is None:
            observation, info = self._continue_from
            self._continue_from = None
            return observation, info
        self._continue_from = None
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._steps += 1
        if self.no_done_at_end and terminated:
            terminated, truncated = False, True
        elif self.horizon is not None and self._steps >= self.horizon and not (terminated or truncated):
            truncated = True
            if self.soft_horizon:
                self._continue_from = (observation, info)
        return observation, reward, terminated, truncated, info


def episode_limits_wrapper(config) -> Optional[Callable[[gym.Env], gym.Env]]:
    """A function wrapping one sub-env per the config's horizon options, or None when none is set."""
    horizon, soft, no_done = config.horizon, config.soft_horizon, config.no_done_at_end
    if horizon is None and not no_done:
        return None
    return lambda env: EpisodeLimits(env, horizon=horizon, soft_horizon=soft, no_done_at_end=no_done)


def user_env(env: gym.Env) -> gym.Env:
    """The env below relayrl's own wrappers (what `foreach_env` hands to user functions)."""
    while isinstance(env, EpisodeLimits):
        env = env.env
    return env
