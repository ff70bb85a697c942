"""`GroupAgentsWrapper` (RLlib's agent groups): several agents of a MultiAgentEnv act as one.

`env.with_agent_groups({"group_1": [0, 1]})` gives an env in which agent "group_1" replaces agents 0 and 1: its
observation and action are tuples of theirs (in the group's order), its reward is the sum of theirs (each one's
is kept in `infos["group_1"][GROUP_REWARDS]`, their infos in `infos["group_1"][GROUP_INFO]`), and it is
terminated (truncated) once all of them are. Agents in no group stay as they are. All agents of a group must act
in the same steps, as in QMIX-style centralised learning.
"""
from typing import Any, Dict, List, Optional

import gymnasium as gym

from relayrl.env.multi_agent_env import MultiAgentEnv
from relayrl.episodes.multi_agent_episode import MultiAgentEnvError

GROUP_REWARDS = "_group_rewards"
GROUP_INFO = "_group_info"


class GroupAgentsWrapper(MultiAgentEnv):
    def __init__(self, env: MultiAgentEnv, groups: Dict[Any, List[Any]], obs_space: Optional[gym.Space] = None,
                 act_space: Optional[gym.Space] = None):
        self.env = env
        self.groups = {group_id: list(members) for group_id, members in groups.items()}
        self._group_of = {}
        for group_id, members in self.groups.items():
            if group_id in env.possible_agents:
                raise ValueError(f"Group id {group_id!r} is also an agent id of {type(env).__name__}; pick another.")
            for agent_id in members:
                if agent_id in self._group_of:
                    raise ValueError(f"Agent {agent_id!r} is in groups {self._group_of[agent_id]!r} and "
                                     f"{group_id!r}; an agent may be in one group only.")
                self._group_of[agent_id] = group_id
        ungrouped = [agent_id for agent_id in env.possible_agents if agent_id not in self._group_of]
        self.possible_agents = ungrouped + list(self.groups)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: env.get_observation_space(a) for a in ungrouped}
        self.action_spaces = {a: env.get_action_space(a) for a in ungrouped}
        for group_id, members in self.groups.items():
            self.observation_spaces[group_id] = obs_space or gym.spaces.Tuple(
                [env.get_observation_space(a) for a in members])
            self.action_spaces[group_id] = act_space or gym.spaces.Tuple([env.get_action_space(a) for a in members])
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        self.action_space = gym.spaces.Dict(self.action_spaces)
        super().__init__()

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._group(observations, tuple), self._group_infos(infos, {})

    def step(self, action_dict: Dict[Any, Any]):
        observations, rewards, terminateds, truncateds, infos = self.env.step(self._ungroup(action_dict))
        grouped_rewards = self._group(rewards, list)
        group_rewards = {}
        for agent_id in list(grouped_rewards):
            if agent_id in self.groups:
                group_rewards[agent_id] = grouped_rewards[agent_id]
                grouped_rewards[agent_id] = sum(grouped_rewards[agent_id])
        return (self._group(observations, tuple), grouped_rewards, self._group_flags(terminateds),
                self._group_flags(truncateds), self._group_infos(infos, group_rewards))

    def render(self):
        return self.env.render()

    def _ungroup(self, action_dict: Dict[Any, Any]) -> Dict[Any, Any]:
        actions = {}
        for agent_id, action in action_dict.items():
            members = self.groups.get(agent_id)
            if members is None:
                actions[agent_id] = action
                continue
            if len(action) != len(members):
                raise MultiAgentEnvError(f"Group {agent_id!r} has {len(members)} agents but got {len(action)} "
                                         "actions; its action is a tuple with one action per agent.")
            actions.update(zip(members, action))
        return actions

    def _group(self, per_agent: Dict[Any, Any], container) -> Dict[Any, Any]:
        """Members' items -> one item per group (a `container` of them, in the group's order)."""
        out = {agent_id: value for agent_id, value in per_agent.items() if agent_id not in self._group_of}
        for group_id, members in self.groups.items():
            present = [a for a in members if a in per_agent]
            if not present:
                continue
            if len(present) != len(members):
                raise MultiAgentEnvError(
                    f"Agents {present} of group {group_id!r} ({members}) have data in this step but "
                    f"{sorted(set(members) - set(present), key=str)} do not: the agents of a group must act in the "
                    "same steps.")
            out[group_id] = container(per_agent[a] for a in members)
        return out

    def _group_flags(self, flags: Dict[Any, bool]) -> Dict[Any, bool]:
        out = {agent_id: value for agent_id, value in flags.items() if agent_id not in self._group_of}
        for group_id, members in self.groups.items():
            if any(a in flags for a in members):
                out[group_id] = all(flags.get(a, False) for a in members)
        return out

    def _group_infos(self, infos: Dict[Any, dict], group_rewards: Dict[Any, list]) -> Dict[Any, dict]:
        out = {agent_id: info for agent_id, info in infos.items() if agent_id not in self._group_of}
        for group_id, members in self.groups.items():
            if any(a in infos for a in members) or group_id in group_rewards:
                out[group_id] = {GROUP_INFO: [infos.get(a, {}) for a in members]}
                if group_id in group_rewards:
                    out[group_id][GROUP_REWARDS] = group_rewards[group_id]
        return out


__all__ = ["GROUP_INFO", "GROUP_REWARDS", "GroupAgentsWrapper"]
