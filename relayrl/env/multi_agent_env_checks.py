"""The MultiAgentEnv contract (RLlib's), checked on every reset() and step() result of a multi-agent env.

`MultiAgentEnvChecks` holds the checks of one sub-env. Its first reset() and step() results get the full check
(`check_multi_agent_reset` / `check_multi_agent_step`: the tuple and its dicts, "__all__", rewards, every
observation in its space); every later one the cheap checks, a few dict and type tests per agent: "__all__" in
terminateds, the agent ids of observations, rewards, terminateds and truncateds among the env's declared
agents, real-number rewards and, for Box observation spaces, the observation's shape. A mistake raises
`MultiAgentEnvAPIError` (an EnvAPIError and a MultiAgentEnvError) naming the env, the agent, the step and the fix.
"""
import numbers

import gymnasium as gym
import numpy as np

from relayrl.env.env_checks import EnvAPIError
from relayrl.episodes.multi_agent_episode import MultiAgentEnvError

_ALL = "__all__"
_UNKNOWN = object()  # (an agent the env does not declare)
_PLAIN_REWARDS = frozenset({float, int, np.float32, np.float64, np.int32, np.int64})  # the fast path's types


class MultiAgentEnvAPIError(EnvAPIError, MultiAgentEnvError):
    """A multi-agent env's reset() or step() broke the MultiAgentEnv contract."""


class MultiAgentEnvChecks:
    """The checks of one sub-env's reset() and step() results (see the module docstring); `where` names it."""

    __slots__ = ("name", "observation_space", "agents", "agents_and_all", "shapes", "t", "checked_reset",
                 "checked_step")

    def __init__(self, env, observation_space: gym.spaces.Dict, where: str):
        self.name = f"{type(env).__name__} ({where})"
        self.observation_space = observation_space
        self.agents = frozenset(observation_space.spaces)
        self.agents_and_all = self.agents | {_ALL}
        # Each declared agent -> the shape its observations must have (None: a space that is not a Box).
        self.shapes = {a: s.shape if isinstance(s, gym.spaces.Box) else None
                       for a, s in observation_space.spaces.items()}
        self.t = 0  # env steps since the last reset
        self.checked_reset = self.checked_step = False

    def reset(self, result) -> None:
        self.t = 0
        if self.checked_reset:
            try:
                if self._observations_fit(result[0]):
                    return
            except (TypeError, AttributeError, IndexError, KeyError, ValueError):
                pass
        self.checked_reset = True
        check_multi_agent_reset(self.name, result, self.observation_space)  # finds the mistake and names it

    def step(self, result) -> None:
        """Every step of the sampling loop runs this: a few dict and type tests per agent, written out for speed
        (benchmarks/multi_agent_env_checks_cost.py)."""
        self.t += 1
        if self.checked_step:
            try:
                observations, rewards, terminateds, truncateds, _ = result
                known = self.agents_and_all
                if _ALL in terminateds and known.issuperset(terminateds) and known.issuperset(truncateds):
                    agents = self.agents
                    for agent_id, reward in rewards.items():
                        if type(reward) not in _PLAIN_REWARDS or agent_id not in agents:
                            break
                    else:
                        if self._observations_fit(observations):
                            return
            except (TypeError, AttributeError, ValueError):
                pass
        self.checked_step = True  # the first step, or a mistake: the full check (which names it, or accepts)
        check_multi_agent_step(self.name, result, self.observation_space, self.t)

    def _observations_fit(self, observations: dict) -> bool:
        """Declared agents, and Box observations of their space's shape (else the full check looks closer)."""
        shapes = self.shapes
        for agent_id, observation in observations.items():
            shape = shapes.get(agent_id, _UNKNOWN)
            if shape is not None and getattr(observation, "shape", None) != shape:
                return False
        return True


def check_multi_agent_reset(name: str, result, observation_space: gym.spaces.Dict) -> None:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], dict)
            and isinstance(result[1], dict)):
        raise MultiAgentEnvAPIError(f"{name}.reset() returned {_short(result)}; a MultiAgentEnv's reset(*, seed, "
                                    "options) returns (observations, infos), two dicts keyed by agent id.")
    _check_observations(f"{name}.reset()", result[0], observation_space)


def check_multi_agent_step(name: str, result, observation_space: gym.spaces.Dict, t: int) -> None:
    call = f"{name}.step() (step {t} of the episode)"
    if not (isinstance(result, tuple) and len(result) == 5 and all(isinstance(part, dict) for part in result)):
        raise MultiAgentEnvAPIError(f"{call} returned {_short(result)}; a MultiAgentEnv's step(action_dict) returns "
                                    "(observations, rewards, terminateds, truncateds, infos), five dicts keyed by "
                                    "agent id.")
    observations, rewards, terminateds, truncateds, _ = result
    if _ALL not in terminateds:
        raise MultiAgentEnvAPIError(f"{call} returned terminateds {_short(terminateds)} without '__all__'; set "
                                    "terminateds['__all__'] on every step (True ends the episode for every agent).")
    known = observation_space.spaces
    for what, values in (("a reward", rewards), ("terminateds", terminateds), ("truncateds", truncateds)):
        for agent_id in values:
            if agent_id != _ALL and agent_id not in known:
                raise MultiAgentEnvAPIError(_unknown_agent(call, what, agent_id, known))
    for agent_id, reward in rewards.items():
        if not isinstance(reward, (numbers.Real, np.number)) or isinstance(reward, (bool, np.bool_)):
            raise MultiAgentEnvAPIError(f"{call} returned the reward {_short(reward)} ({type(reward).__name__}) for "
                                        f"agent {agent_id!r}; rewards are real numbers: return e.g. float(reward).")
    _check_observations(call, observations, observation_space)


def _check_observations(call: str, observations: dict, observation_space: gym.spaces.Dict) -> None:
    known = observation_space.spaces
    for agent_id, observation in observations.items():
        if agent_id not in known:
            raise MultiAgentEnvAPIError(_unknown_agent(call, "an observation", agent_id, known))
        space = known[agent_id]
        if _shape_of(observation) != space.shape and not space.contains(observation):
            raise MultiAgentEnvAPIError(f"{call} returned an observation of shape {_shape_of(observation)} for agent "
                                        f"{agent_id!r}; its observation space is {space}: return observations of "
                                        "that shape (or declare the space the env really has).")


def _shape_of(value):
    try:
        return np.shape(value)
    except ValueError:  # a ragged nest of lists
        return "ragged"


def _unknown_agent(call: str, what: str, agent_id, known) -> str:
    return (f"{call} returned {what} for agent {agent_id!r}, which is not in its spaces (agents: {list(known)}); "
            "declare every agent in possible_agents and observation_spaces / action_spaces.")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."
