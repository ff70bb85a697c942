"""`MultiAgentVectorEnv`: several multi-agent envs stepped together, each reset as soon as its episode ends."""
from typing import Any, Callable, List, Optional

import gymnasium as gym
import numpy as np

from relayrl.env.env_context import EnvContext
from relayrl.env.episode_limits import user_env
from relayrl.env.multi_agent_env import MultiAgentEnv
from relayrl.env.multi_agent_env_checks import MultiAgentEnvChecks
from relayrl.env.sub_env_errors import note_env_creation
from relayrl.env.vector_env import in_space_dtype
from relayrl.env.vector.vector_multi_agent_env import VectorMultiAgentEnv


class MultiAgentVectorEnv(VectorMultiAgentEnv):
    """`num_envs` MultiAgentEnvs in this process (gymnasium's vector envs take arrays, not agent dicts).

    `step(actions)` takes one {agent_id: action} dict per env and returns lists of the envs' dicts plus
    `resets`: for an env whose episode ended (`"__all__"`), the (observations, infos) of its new episode,
    reset in the same call (as gymnasium's SAME_STEP autoreset), else None. Each agent's observations come in its
    space's dtype (`in_agent_dtypes`), as a single-agent vector env's do. Every reset() and step() result is
    checked against the MultiAgentEnv contract (env/multi_agent_env_checks.py) unless `check_env` is False.
    `wrap`: applied to each env (env/episode_limits.py's MultiAgentEpisodeLimits). `env_label`: the env as an
    error in its creator names it.
    """

    def __init__(self, creator: Callable, env_config: dict, *, num_envs: int, worker_index: int, num_workers: int,
                 check_env: bool = True, wrap: Optional[Callable[[MultiAgentEnv], MultiAgentEnv]] = None,
                 env_label: str = ""):
        self.envs: List[MultiAgentEnv] = []
        for i in range(num_envs):
            try:
                env = creator(EnvContext(env_config, worker_index, i, num_workers))
            except Exception as error:  # (a note naming the env and its env_config: sub_env_errors.py)
                note_env_creation(error, env_label, f"sub-env {i} of EnvRunner worker_index={worker_index}", env_config)
                raise
            if not isinstance(env, MultiAgentEnv):
                raise TypeError(f"The env creator returned {type(env).__name__}, not a MultiAgentEnv; a multi-agent "
                                "config (config.multi_agent(...)) needs a MultiAgentEnv (see make_multi_agent).")
            self.envs.append(env if wrap is None else wrap(env))
        self.num_envs = num_envs
        first = self.envs[0]
        agents = list(first.possible_agents) or list(getattr(first, "observation_spaces", None) or {})
        self.possible_agents = agents
        self.single_observation_space = gym.spaces.Dict({aid: first.get_observation_space(aid) for aid in agents})
        self.single_action_space = gym.spaces.Dict({aid: first.get_action_space(aid) for aid in agents})
        self.observation_space, self.action_space = self.single_observation_space, self.single_action_space
        # Box agents only: a Discrete agent's Python or numpy int is kept (as RLlib does), so envs such as
        # rock-paper-scissors pay no cast per step (~3.7 us for two int observations under load).
        self._box_dtypes = {aid: space.dtype for aid, space in self.single_observation_space.spaces.items()
                            if isinstance(space, gym.spaces.Box)}
        self._checks = [MultiAgentEnvChecks(user_env(env), self.single_observation_space,
                                            f"sub-env {i} of EnvRunner worker_index={worker_index}")
                        for i, env in enumerate(self.envs)] if check_env else None

    def reset(self, *, seed: Optional[int] = None):
        observations, infos = [], []
        for i in range(self.num_envs):
            obs, info = self._reset(i, None if seed is None else seed + i)
            observations.append(obs)
            infos.append(info)
        return observations, infos

    def _reset(self, i: int, seed: Optional[int] = None):
        result = self.envs[i].reset(seed=seed)
        if self._checks is not None:
            self._checks[i].reset(result)
        return self.in_agent_dtypes(result[0]), result[1]

    def in_agent_dtypes(self, observations: dict) -> dict:
        """`observations` (one env's, by agent) with each Box agent's observation in its space's dtype (an env may
        return float64 arrays, lists or ints for a float32 Box): a new dict when one needs casting, else the same
        (a well-behaved env's step pays a type and a dtype test per Box agent)."""
        dtypes = self._box_dtypes
        if not isinstance(observations, dict):  # (a broken env with check_env off: left to fail where it did)
            return observations
        for agent_id, observation in observations.items():
            dtype = dtypes.get(agent_id)
            # (`is`: numpy's builtin dtypes are singletons; another equal dtype object only costs a new dict)
            if dtype is not None and (type(observation) is not np.ndarray or observation.dtype is not dtype):
                return _cast_by_agent(self.single_observation_space.spaces, observations)
        return observations

    def step(self, actions: List[dict]):
        observations, rewards, terminateds, truncateds, infos, resets = [], [], [], [], [], []
        checks = self._checks
        for i, env in enumerate(self.envs):
            result = env.step(actions[i])
            if checks is not None:
                checks[i].step(result)
            obs, reward, terminated, truncated, info = result
            observations.append(self.in_agent_dtypes(obs))
            rewards.append(reward)
            terminateds.append(terminated)
            truncateds.append(truncated)
            infos.append(info)
            done = terminated.get("__all__", False) or truncated.get("__all__", False)
            resets.append(self._reset(i) if done else None)
        return observations, rewards, terminateds, truncateds, infos, resets

    def __repr__(self) -> str:
        return f"MultiAgentVectorEnv({self.num_envs} x {type(user_env(self.envs[0])).__name__})"


def agent_spaces(env: Any) -> tuple:
    """(observation, action) Dict spaces by agent of a MultiAgentVectorEnv."""
    return env.single_observation_space, env.single_action_space


def _cast_by_agent(spaces: dict, observations: dict) -> dict:
    """A new dict: each Box agent's observation in its space's dtype (the others', and an unknown agent's, as they
    are: the checks name the latter)."""
    return {aid: in_space_dtype(spaces[aid], obs) if isinstance(spaces.get(aid), gym.spaces.Box) else obs
            for aid, obs in observations.items()}
