"""Small MultiAgentEnvs the multi-agent tests share: a turn-based game and envs that break the contract."""
import gymnasium as gym
import numpy as np

from relayrl.env.multi_agent_env import MultiAgentEnv


class TurnBasedCount(MultiAgentEnv):
    """Two players take turns ("p0" first); each observes the turn number. A player's reward is 1 when its
    action equals the turn number's parity; the episode ends after `turns` turns."""

    def __init__(self, config=None):
        self.possible_agents = ["p0", "p1"]
        self.agents = list(self.possible_agents)
        space = gym.spaces.Box(0.0, 100.0, (1,), np.float32)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(2) for a in self.possible_agents}
        self.turns = int((config or {}).get("turns", 6))
        self.sent = []  # every action dict step() got (tests read it)
        super().__init__()

    def _obs(self):
        return np.array([self.t], np.float32)

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {"p0": self._obs()}, {"p0": {}}

    def step(self, action_dict):
        self.sent.append(dict(action_dict))
        player = f"p{self.t % 2}"
        assert list(action_dict) == [player], f"turn {self.t}: expected only {player}, got {list(action_dict)}"
        reward = float(action_dict[player] == self.t % 2)
        self.t += 1
        done = self.t >= self.turns
        if done:  # both players see the end
            return ({a: self._obs() for a in self.possible_agents}, {player: reward, f"p{self.t % 2}": 0.0},
                    {"__all__": True}, {"__all__": False}, {})
        nxt = f"p{self.t % 2}"
        return {nxt: self._obs()}, {player: reward}, {"__all__": False}, {"__all__": False}, {}


class EarlyFinisher(MultiAgentEnv):
    """Agent "a" terminates after 2 steps, "b" goes on until step 5; records the action dicts it got."""

    def __init__(self, config=None):
        self.possible_agents = ["a", "b"]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {x: gym.spaces.Box(-1.0, 1.0, (2,), np.float32) for x in self.possible_agents}
        self.action_spaces = {x: gym.spaces.Discrete(3) for x in self.possible_agents}
        self.sent = []
        super().__init__()

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {x: np.zeros(2, np.float32) for x in self.possible_agents}, {}

    def step(self, action_dict):
        self.sent.append(dict(action_dict))
        self.t += 1
        agents = [x for x in self.possible_agents if not (x == "a" and self.t > 2)]
        obs = {x: np.zeros(2, np.float32) for x in agents}
        terminateds = {x: (x == "a" and self.t == 2) or self.t == 5 for x in agents}
        terminateds["__all__"] = self.t == 5
        return obs, {x: 1.0 for x in agents}, terminateds, {"__all__": False}, {}


class StrangerEnv(EarlyFinisher):
    """Returns an observation for "ghost", an agent it does not declare."""

    def step(self, action_dict):
        obs, rewards, terminateds, truncateds, infos = super().step(action_dict)
        obs["ghost"] = np.zeros(2, np.float32)
        return obs, rewards, terminateds, truncateds, infos
