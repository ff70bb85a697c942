"""One-time checks of a MultiAgentEnv's first reset() and step() results (RLlib's contract).

What would otherwise fail later with a confusing error raises here, naming the env and the fix: a
reset() that does not return (observations dict, infos dict), a step() that does not return five
dicts, a terminateds dict without "__all__", a reward that is not a number, an observation for an
agent the env does not declare (MultiAgentEnvError naming the agent).
"""
import numbers

import gymnasium as gym
import numpy as np

from relayrl.env.env_checks import EnvAPIError
from relayrl.episodes.multi_agent_episode import MultiAgentEnvError


def check_multi_agent_reset(env, result, observation_space: gym.spaces.Dict, where: str) -> None:
    name = f"{type(env).__name__} ({where})"
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], dict)
            and isinstance(result[1], dict)):
        raise EnvAPIError(f"{name}.reset() returned {_short(result)}; a MultiAgentEnv's reset(*, seed, options) "
                          "returns (observations, infos), two dicts keyed by agent id.")
    _check_agents(name, result[0], observation_space, "reset()")


def check_multi_agent_step(env, result, observation_space: gym.spaces.Dict, where: str) -> None:
    name = f"{type(env).__name__} ({where})"
    if not (isinstance(result, tuple) and len(result) == 5 and all(isinstance(part, dict) for part in result)):
        raise EnvAPIError(f"{name}.step() returned {_short(result)}; a MultiAgentEnv's step(action_dict) returns "
                          "(observations, rewards, terminateds, truncateds, infos), five dicts keyed by agent id.")
    observations, rewards, terminateds, truncateds, _ = result
    if "__all__" not in terminateds:
        raise EnvAPIError(f"{name}.step() returned terminateds {_short(terminateds)} without '__all__'; set "
                          "terminateds['__all__'] (True ends the episode for every agent).")
    for agent_id, reward in rewards.items():
        if not isinstance(reward, (numbers.Real, np.number)) or isinstance(reward, bool):
            raise EnvAPIError(f"{name}.step() returned the reward {reward!r} for agent {agent_id!r}; rewards are "
                              "real numbers.")
    _check_agents(name, observations, observation_space, "step()")


def _check_agents(name: str, observations: dict, observation_space: gym.spaces.Dict, call: str) -> None:
    known = observation_space.spaces
    for agent_id, observation in observations.items():
        if agent_id not in known:
            raise MultiAgentEnvError(
                f"{name}.{call} returned an observation for agent {agent_id!r}, which is not in its spaces "
                f"(agents: {list(known)}); declare every agent in possible_agents and observation_spaces.")
        if not known[agent_id].contains(observation) and np.shape(observation) != known[agent_id].shape:
            raise EnvAPIError(f"{name}.{call} returned an observation of shape {np.shape(observation)} for agent "
                              f"{agent_id!r}; its observation space is {known[agent_id]}.")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."
