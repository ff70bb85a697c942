"""The two-step game of the QMIX paper (RLlib's example env): two agents, one shared reward, and a coordination
problem that independent learners tend to miss.

Step 1: agent 0 picks the matrix game (0: a safe one paying 7 whatever they do; 1: a risky one). Step 2, in the
risky game: both pick 1 -> 8, both 0 -> 0, else 1. Each agent gets half of the team reward. Observations:
`Discrete(6)` (the state 0-2, offset by 3 for agent 1), or with `one_hot_state_encoding` the one-hot state plus
the agent's number, and with `separate_state_space` also the global state under `ENV_STATE`.
`TwoStepGameWithGroupedAgents`: both agents as one group ("agents"), acting with one tuple action.
"""
import numpy as np
from gymnasium.spaces import Dict, Discrete, MultiDiscrete, Tuple

from relayrl.env.multi_agent_env import ENV_STATE, MultiAgentEnv

_REWARDS_OF_THE_RISKY_GAME = {(0, 0): 0.0, (1, 1): 8.0}  # mixed actions pay 1
_SAFE_REWARD = 7.0


class TwoStepGame(MultiAgentEnv):
    def __init__(self, env_config=None):
        super().__init__()
        env_config = env_config or {}
        self.one_hot_state_encoding = env_config.get("one_hot_state_encoding", False)
        self.with_state = self.one_hot_state_encoding and env_config.get("separate_state_space", False)
        self.agents = self.possible_agents = [0, 1]
        if not self.one_hot_state_encoding:
            observation_space = Discrete(6)
        elif self.with_state:
            observation_space = Dict({"obs": MultiDiscrete([2, 2, 2, 3]), ENV_STATE: MultiDiscrete([2, 2, 2])})
        else:
            observation_space = MultiDiscrete([2, 2, 2, 3])
        self.observation_spaces = {agent: observation_space for agent in self.agents}
        self.action_spaces = {agent: Discrete(2) for agent in self.agents}
        self.state = 0  # 0: the first step; 1: the safe game; 2: the risky game

    def reset(self, *, seed=None, options=None):
        self.state = 0
        return self._observations(), {}

    def step(self, action_dict):
        if self.state == 0:
            self.state = 1 if action_dict[0] == 0 else 2
            team_reward, done = 0.0, False
        elif self.state == 1:
            team_reward, done = _SAFE_REWARD, True
        else:
            joint = (int(action_dict[0]), int(action_dict[1]))
            team_reward, done = _REWARDS_OF_THE_RISKY_GAME.get(joint, 1.0), True
        rewards = {agent: team_reward / 2 for agent in self.agents}
        infos = {agent: {"done": done} for agent in self.agents}
        return self._observations(), rewards, {"__all__": done}, {"__all__": False}, infos

    def _observations(self):
        return {agent: self._observation(agent) for agent in self.agents}

    def _observation(self, agent):
        if not self.one_hot_state_encoding:
            return self.state + 3 * agent
        one_hot = np.zeros(3, dtype=np.int64)
        one_hot[self.state] = 1
        obs = np.concatenate([one_hot, [agent + 1]])
        return {"obs": obs, ENV_STATE: one_hot} if self.with_state else obs


class TwoStepGameWithGroupedAgents(MultiAgentEnv):
    """The two agents as one agent, "agents", whose observation and action are pairs."""

    def __init__(self, env_config=None):
        game = TwoStepGame(env_config)
        observation_space = game.get_observation_space(0)
        self.env = game.with_agent_groups(groups={"agents": [0, 1]},
                                          obs_space=Tuple([observation_space, observation_space]),
                                          act_space=Tuple([Discrete(2), Discrete(2)]))
        self.agents = self.possible_agents = ["agents"]
        self.observation_spaces = dict(self.env.observation_spaces)
        self.action_spaces = dict(self.env.action_spaces)
        super().__init__()

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed, options=options)

    def step(self, action_dict):
        return self.env.step(action_dict)
