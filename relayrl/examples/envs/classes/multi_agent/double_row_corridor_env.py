"""`DoubleRowCorridorEnv` (RLlib's example env): two agents in a grid of 2 rows and `length` columns (config
"length", default 15), each walking to its own goal; meeting the other agent on the way pays a bonus.

    +---------------+
    |0             G1|    agent_0 starts top-left, its goal is top-right;
    |G0             1|    agent_1 starts bottom-right, its goal is bottom-left.
    +---------------+

Actions `Discrete(4)`: up, down, left, right. Observations: the agent's own (row, column) as an int32 `Box`.
Rewards: -0.1 per step, +10 on reaching the goal (the agent is then done), +5 to both the first time they stand
on the same cell. An agent cannot see the other, so learning to meet needs the other's row in the observation:
a connector adds it (relayrl/examples/connectors/classes/add_other_agents_row_index_to_xy_pos.py).
"""
import gymnasium as gym
import numpy as np

from relayrl.env.multi_agent_env import MultiAgentEnv

_MOVES = {0: (-1, 0), 1: (1, 0), 2: (0, -1), 3: (0, 1)}
_STEP_REWARD, _GOAL_REWARD, _MEETING_REWARD = -0.1, 10.0, 5.0


class DoubleRowCorridorEnv(MultiAgentEnv):
    def __init__(self, config=None):
        super().__init__()
        self.length = int((config or {}).get("length", 15))
        self.agents = self.possible_agents = ["agent_0", "agent_1"]
        space = gym.spaces.Box(0, self.length - 1, shape=(2,), dtype=np.int32)
        self.observation_spaces = {agent: space for agent in self.agents}
        self.action_spaces = {agent: gym.spaces.Discrete(4) for agent in self.agents}
        self.goals = {"agent_0": (0, self.length - 1), "agent_1": (1, 0)}

    def reset(self, *, seed=None, options=None):
        self.positions = {"agent_0": (0, 0), "agent_1": (1, self.length - 1)}
        self.done = {agent: False for agent in self.agents}
        self.met = False
        return self._observations(), {}

    def step(self, action_dict):
        rewards = {agent: _STEP_REWARD for agent in self.agents if not self.done[agent]}
        for agent, action in action_dict.items():
            d_row, d_col = _MOVES[int(action)]
            row, col = self.positions[agent]
            self.positions[agent] = (min(max(row + d_row, 0), 1), min(max(col + d_col, 0), self.length - 1))
        if not self.met and not any(self.done.values()) and self.positions["agent_0"] == self.positions["agent_1"]:
            self.met = True
            for agent in self.agents:
                rewards[agent] += _MEETING_REWARD
        observations = self._observations()  # before the goal check: an agent reaching its goal sees its last cell
        terminateds = {}
        for agent in rewards:  # the agents active in this step
            if self.positions[agent] == self.goals[agent]:
                rewards[agent] += _GOAL_REWARD
                self.done[agent] = True
            terminateds[agent] = self.done[agent]
        terminateds["__all__"] = all(self.done.values())
        return observations, rewards, terminateds, {"__all__": False}, {}

    def _observations(self):
        return {agent: np.array(self.positions[agent], dtype=np.int32) for agent in self.agents
                if not self.done[agent]}
