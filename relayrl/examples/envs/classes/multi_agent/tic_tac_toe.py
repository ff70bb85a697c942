"""Tic-tac-toe as a turn-based MultiAgentEnv (RLlib's example env
`ray.rllib.examples.envs.classes.multi_agent.tic_tac_toe`, written for relayrl).

Two players, "player1" and "player2", take turns on a 3x3 board; a random one starts. Each sees the board from its
own side: Box(-1, 1, (9,)) with 1.0 for its marks, -1.0 for the opponent's, 0.0 for empty cells (0-2 the top row).
An action (Discrete(9)) on an occupied cell costs -0.5 and passes the turn; three in a row gives +1.0 to the
winner and -1.0 to the other; a full board is a draw (0.0 each); after 30 moves the episode is truncated.
"""
import random

import gymnasium as gym
import numpy as np

from relayrl.env.multi_agent_env import MultiAgentEnv

WIN_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


class TicTacToe(MultiAgentEnv):
    max_timesteps = 30

    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = ["player1", "player2"]
        self.observation_spaces = {agent: gym.spaces.Box(-1.0, 1.0, (9,), np.float32) for agent in self.agents}
        self.action_spaces = {agent: gym.spaces.Discrete(9) for agent in self.agents}
        self._rng = random.Random()
        self.board = [0] * 9  # from the current player's side
        self.current_player = "player1"
        self.timestep = 0

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._rng.seed(seed)
        self.board = [0] * 9
        self.current_player = self._rng.choice(self.agents)
        self.timestep = 0
        return {self.current_player: self._board()}, {}

    def _board(self, side: float = 1.0) -> np.ndarray:
        return np.array(self.board, np.float32) * side

    def _opponent(self) -> str:
        return "player2" if self.current_player == "player1" else "player1"

    def _end(self, reward: float, *, truncated: bool = False, opponent_reward: float = None):
        """Both players see the final board; the episode is over."""
        player, opponent = self.current_player, self._opponent()
        opponent_reward = -reward if opponent_reward is None else opponent_reward
        return ({player: self._board(), opponent: self._board(-1.0)}, {player: reward, opponent: opponent_reward},
                {"__all__": not truncated}, {"__all__": truncated}, {})

    def _pass_turn(self, reward: float):
        player = self.current_player
        self.board = [-x for x in self.board]
        self.current_player = self._opponent()
        return ({self.current_player: self._board()}, {player: reward}, {"__all__": False}, {"__all__": False}, {})

    def step(self, action_dict):
        action = int(action_dict[self.current_player])
        self.timestep += 1
        out_of_time = self.timestep >= self.max_timesteps
        if self.board[action] != 0:  # an occupied cell
            return self._end(-0.5, truncated=True, opponent_reward=0.0) if out_of_time else self._pass_turn(-0.5)
        self.board[action] = 1
        if any(all(self.board[i] == 1 for i in line) for line in WIN_LINES):
            return self._end(1.0)
        if 0 not in self.board:
            return self._end(0.0)
        if out_of_time:
            return self._end(0.0, truncated=True)
        return self._pass_turn(0.0)

    def render(self) -> str:
        """The board from the current player's side: X its marks, O the opponent's."""
        marks = {1: "X", -1: "O", 0: " "}
        rows = [" | ".join(marks[self.board[3 * r + c]] for c in range(3)) for r in range(3)]
        return "\n---------\n".join(rows)
