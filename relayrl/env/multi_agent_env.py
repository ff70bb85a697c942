"""`MultiAgentEnv` (RLlib's contract) and `make_multi_agent`: several agents in one environment.

An env step takes and returns dicts keyed by agent id:

    observations, infos = env.reset(seed=..., options=...)
    observations, rewards, terminateds, truncateds, infos = env.step({agent_id: action, ...})

The agents in `observations` are the ones to act next (a turn-based game returns only the next
player's observation); `terminateds["__all__"]` (required) or `truncateds["__all__"]` ends the
episode; agents may join late (their first observation) and finish early (their own
`terminateds[agent_id]`), after which they get no more actions.
"""
import copy
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import gymnasium as gym

from relayrl.episodes.multi_agent_episode import MultiAgentEnvError

# The observation key of the global env state next to each agent's own ("obs"), for centralised critics (QMIX).
ENV_STATE = "state"


class MultiAgentEnv(gym.Env):
    """Base class of multi-agent envs (RLlib's `MultiAgentEnv`).

    Set per-agent spaces in `observation_spaces` / `action_spaces` (dicts by agent id), or a
    `gym.spaces.Dict` `observation_space` / `action_space` holding each agent, and the agent ids in
    `possible_agents` (every agent that may ever appear) and `agents` (the ones active now).
    """

    observation_spaces: Optional[Dict[Any, gym.Space]] = None
    action_spaces: Optional[Dict[Any, gym.Space]] = None
    # `agents`: the agents currently in the episode (may change); `possible_agents`: all that may ever appear.
    agents: List[Any] = []
    possible_agents: List[Any] = []

    def __init__(self):
        super().__init__()
        if not self.agents and getattr(self, "_agent_ids", None):  # RLlib's older attribute
            self.agents = list(self._agent_ids)
        if not self.possible_agents:
            self.possible_agents = list(self.agents)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[dict, dict]:
        raise NotImplementedError(f"{type(self).__name__} must implement reset(*, seed=None, options=None).")

    def step(self, action_dict: Dict[Any, Any]) -> Tuple[dict, dict, dict, dict, dict]:
        raise NotImplementedError(f"{type(self).__name__} must implement step(action_dict).")

    def get_observation_space(self, agent_id) -> gym.Space:
        """The agent's observation space: `observation_spaces[agent_id]`, else the Dict
        `observation_space`'s entry, else the whole `observation_space`."""
        return _space_of(self, agent_id, "observation")

    def get_action_space(self, agent_id) -> gym.Space:
        return _space_of(self, agent_id, "action")

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)

    def get_agent_ids(self) -> set:
        """RLlib's older API: the ids of the possible agents."""
        return set(self.possible_agents)

    def render(self) -> None:
        pass

    def with_agent_groups(self, groups: Dict[Any, List[Any]], obs_space: Optional[gym.Space] = None,
                          act_space: Optional[gym.Space] = None) -> "MultiAgentEnv":
        """This env with each group of agents acting as one agent (relayrl/env/wrappers/group_agents_wrapper.py):
        `groups={"group_1": [0, 1]}`; the group's observation and action are tuples of its members', its reward
        their sum. `obs_space` / `act_space`: the groups' Tuple spaces (default: the members' spaces)."""
        from relayrl.env.wrappers.group_agents_wrapper import GroupAgentsWrapper

        return GroupAgentsWrapper(self, groups, obs_space, act_space)


def is_multi_agent_env(env) -> bool:
    """`env` is a MultiAgentEnv, or a wrapper around one (gymnasium wrappers keep it as `unwrapped`)."""
    return isinstance(env, MultiAgentEnv) or isinstance(getattr(env, "unwrapped", None), MultiAgentEnv)


def _space_of(env, agent_id, kind: str) -> gym.Space:
    spaces = getattr(env, f"{kind}_spaces", None)
    if spaces:
        if agent_id not in spaces:
            raise MultiAgentEnvError(
                f"{type(env).__name__} has no {kind} space for agent {agent_id!r}: its {kind}_spaces hold "
                f"{list(spaces)}. An env returns observations only for agents it declares (possible_agents and "
                f"{kind}_spaces).")
        return spaces[agent_id]
    space = getattr(env, f"{kind}_space", None)
    if isinstance(space, gym.spaces.Dict) and agent_id in space.spaces:
        return space[agent_id]
    if space is None:
        raise MultiAgentEnvError(f"{type(env).__name__} declares no {kind} space for agent {agent_id!r}: set "
                                 f"{kind}_spaces = {{agent_id: space}} (or a Dict {kind}_space).")
    return space


def make_multi_agent(env_name_or_creator: Union[str, Callable[[dict], gym.Env]]) -> type:
    """A MultiAgentEnv class whose instances run `config["num_agents"]` (default 1) copies of a single-agent
    env, agent i in copy i (agent ids 0..n-1): `MultiAgentCartPole = make_multi_agent("CartPole-v1")`,
    then `MultiAgentCartPole({"num_agents": 2})`.

    Every agent acts every step until its own copy ends; `terminateds["__all__"]` is set once every copy
    has terminated or truncated, `truncateds["__all__"]` once every copy truncated.
    """

    class MultiEnv(MultiAgentEnv):
        def __init__(self, config: Optional[dict] = None):
            # A copy of the same type: an EnvContext keeps worker_index etc. for the creator function.
            config = copy.deepcopy(config) if isinstance(config, dict) else dict(config or {})
            num = int(config.pop("num_agents", 1))
            if isinstance(env_name_or_creator, str):
                self.envs = [gym.make(env_name_or_creator) for _ in range(num)]
            else:
                self.envs = [env_name_or_creator(config) for _ in range(num)]
            self.agents = list(range(num))
            self.possible_agents = list(self.agents)
            self.observation_spaces = {i: env.observation_space for i, env in enumerate(self.envs)}
            self.action_spaces = {i: env.action_space for i, env in enumerate(self.envs)}
            self.observation_space = gym.spaces.Dict(self.observation_spaces)
            self.action_space = gym.spaces.Dict(self.action_spaces)
            self._terminated, self._truncated = set(), set()
            super().__init__()

        def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
            self._terminated, self._truncated = set(), set()
            observations, infos = {}, {}
            for i, env in enumerate(self.envs):
                # Copy i gets seed + i (RLlib gives every copy the same seed, so they start alike).
                observations[i], infos[i] = env.reset(seed=None if seed is None else seed + i, options=options)
            return observations, infos

        def step(self, action_dict: Dict[Any, Any]):
            if not action_dict:
                raise MultiAgentEnvError(f"{type(self).__name__}.step() got an empty action dict; send an action "
                                         "for each agent that has an observation.")
            observations, rewards, terminateds, truncateds, infos = {}, {}, {}, {}, {}
            for i, action in action_dict.items():
                observations[i], rewards[i], terminateds[i], truncateds[i], infos[i] = self.envs[i].step(action)
                if terminateds[i]:
                    self._terminated.add(i)
                if truncateds[i]:
                    self._truncated.add(i)
            n = len(self.envs)
            terminateds["__all__"] = len(self._terminated | self._truncated) == n
            truncateds["__all__"] = len(self._truncated) == n
            return observations, rewards, terminateds, truncateds, infos

        def render(self):
            return self.envs[0].render()

        def close(self):
            for env in self.envs:
                env.close()

        # Checkpoints: each copy's plain-data state (relayrl/checkpoints/env_state.py), and who is done.
        def get_state(self) -> dict:
            from relayrl.checkpoints.env_state import get_env_state

            return {"envs": [get_env_state(env) for env in self.envs], "terminated": sorted(self._terminated),
                    "truncated": sorted(self._truncated)}

        def set_state(self, state: dict) -> None:
            from relayrl.checkpoints.env_state import set_env_state

            for env, env_state in zip(self.envs, state["envs"]):
                set_env_state(env, env_state)
            self._terminated, self._truncated = set(state["terminated"]), set(state["truncated"])

    name = env_name_or_creator if isinstance(env_name_or_creator, str) else \
        getattr(env_name_or_creator, "__name__", "env")
    MultiEnv.__name__ = MultiEnv.__qualname__ = f"MultiAgent({name})"
    return MultiEnv


__all__ = ["ENV_STATE", "MultiAgentEnv", "MultiAgentEnvError", "is_multi_agent_env", "make_multi_agent"]
