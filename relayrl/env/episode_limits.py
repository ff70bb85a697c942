"""RLlib's old `horizon`, `soft_horizon` and `no_done_at_end` as gymnasium wrappers around each sub-env.

- `horizon=N`: an episode ends after N steps with truncated=True (like gymnasium's TimeLimit).
- `soft_horizon=True`: at the horizon the episode ends (metrics, value bootstrap) but the env is not reset:
  the vector env's auto-reset gets the last observation back and the next episode goes on from there.
- `no_done_at_end=True`: terminated=True is reported as truncated=True, so value targets bootstrap.

The wrappers are added only when one of the options is set; `foreach_env` and `env.unwrapped` see the
user's env (`user_env`). `MultiAgentEpisodeLimits` does the same for a MultiAgentEnv: at the horizon every
agent still in the episode is truncated (`truncateds["__all__"]`), and `no_done_at_end` turns each agent's
termination (and `"__all__"`'s) into a truncation.
"""
from typing import Callable, Optional

import gymnasium as gym

from relayrl.env.multi_agent_env import MultiAgentEnv


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


def _of_wrapped(name: str) -> property:
    return property(lambda self: getattr(self.env, name))


class MultiAgentEpisodeLimits(MultiAgentEnv):
    """One MultiAgentEnv under horizon / soft_horizon / no_done_at_end (see the module docstring). It is a
    MultiAgentEnv itself (the runners require one) that answers with the wrapped env's spaces and agents."""

    def __init__(self, env: MultiAgentEnv, *, horizon: Optional[int], soft_horizon: bool, no_done_at_end: bool):
        self.env = env
        self.horizon, self.soft_horizon, self.no_done_at_end = horizon, soft_horizon, no_done_at_end
        self._steps = 0
        self._continue_from = None  # (observations, infos) the next reset() returns (soft horizon)

    def __getattr__(self, name):  # the user's own attributes and methods: the wrapped env's
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    # MultiAgentEnv and gym.Env define these on the class, where __getattr__ would not reach the wrapped env's
    observation_spaces, action_spaces = _of_wrapped("observation_spaces"), _of_wrapped("action_spaces")
    observation_space, action_space = _of_wrapped("observation_space"), _of_wrapped("action_space")
    agents, possible_agents = _of_wrapped("agents"), _of_wrapped("possible_agents")
    metadata, render_mode, spec = _of_wrapped("metadata"), _of_wrapped("render_mode"), _of_wrapped("spec")

    @property
    def unwrapped(self):
        return self.env.unwrapped

    def get_observation_space(self, agent_id):
        return self.env.get_observation_space(agent_id)

    def get_action_space(self, agent_id):
        return self.env.get_action_space(agent_id)

    def get_agent_ids(self):
        return self.env.get_agent_ids()

    def render(self):
        return self.env.render()

    def close(self):
        return self.env.close()

    def reset(self, *, seed=None, options=None):
        self._steps = 0
        continue_from, self._continue_from = self._continue_from, None
        if continue_from is not None and seed is None:
            return continue_from
        return self.env.reset(seed=seed, options=options)

    def step(self, action_dict):
        observations, rewards, terminateds, truncateds, infos = self.env.step(action_dict)
        self._steps += 1
        if self.no_done_at_end and any(terminateds.values()):
            truncateds = dict(truncateds)
            for agent_id, terminated in terminateds.items():
                truncateds[agent_id] = truncateds.get(agent_id, False) or terminated
            terminateds = {agent_id: False for agent_id in terminateds}
        elif (self.horizon is not None and self._steps >= self.horizon
              and not (terminateds.get("__all__") or truncateds.get("__all__"))):
            truncateds = dict(truncateds, __all__=True)
            for agent_id in observations:  # the agents still in the episode
                if not terminateds.get(agent_id):
                    truncateds[agent_id] = True
            if self.soft_horizon:
                self._continue_from = (observations, infos)
        return observations, rewards, terminateds, truncateds, infos


def episode_limits_wrapper(config, multi_agent: bool = False) -> Optional[Callable]:
    """A function wrapping one sub-env (a MultiAgentEnv with `multi_agent`) per the config's horizon options,
    or None when none is set."""
    horizon, soft, no_done = config.horizon, config.soft_horizon, config.no_done_at_end
    if horizon is None and not no_done:
        return None
    wrapper = MultiAgentEpisodeLimits if multi_agent else EpisodeLimits
    return lambda env: wrapper(env, horizon=horizon, soft_horizon=soft, no_done_at_end=no_done)


def user_env(env: gym.Env) -> gym.Env:
    """The env below relayrl's own wrappers (what `foreach_env` hands to user functions)."""
    while isinstance(env, (EpisodeLimits, MultiAgentEpisodeLimits)):
        env = env.env
    return env
