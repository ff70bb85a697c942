"""RLlib's example env `ray.rllib.examples.envs.classes.multi_agent.rock_paper_scissors`, written for relayrl.

`RockPaperScissors`: a MultiAgentEnv of two players moving at once for 10 steps; the winner of a step gets +1, the
loser -1; each player observes the opponent's last move (0 after reset). `sheldon_cooper_mode=True` adds lizard (3)
and Spock (4). The heuristic modules that play it: relayrl/examples/rl_modules/classes/
rock_paper_scissors_heuristic_rlm.py.
"""
import gymnasium as gym

from relayrl.env.multi_agent_env import MultiAgentEnv

ROCK, PAPER, SCISSORS, LIZARD, SPOCK = range(5)
# What each move beats (rock crushes scissors and lizard, paper covers rock and disproves Spock, ...).
BEATS = {ROCK: {SCISSORS, LIZARD}, PAPER: {ROCK, SPOCK}, SCISSORS: {PAPER, LIZARD}, LIZARD: {SPOCK, PAPER},
         SPOCK: {SCISSORS, ROCK}}
AFTER_RESET = 3  # the heuristics' "no previous move" observation (PettingZoo's rps env)


def score(move1: int, move2: int):
    """(player 1's reward, player 2's reward) for one step."""
    if move2 in BEATS[move1]:
        return 1, -1
    if move1 in BEATS[move2]:
        return -1, 1
    return 0, 0


class RockPaperScissors(MultiAgentEnv):
    def __init__(self, config=None):
        super().__init__()
        config = config or {}
        self.sheldon_cooper_mode = bool(config.get("sheldon_cooper_mode", False))
        moves = 5 if self.sheldon_cooper_mode else 3
        self.agents = self.possible_agents = ["player1", "player2"]
        self.observation_spaces = {agent: gym.spaces.Discrete(moves) for agent in self.agents}
        self.action_spaces = {agent: gym.spaces.Discrete(moves) for agent in self.agents}
        self.num_moves = 0

    def reset(self, *, seed=None, options=None):
        self.num_moves = 0
        return {"player1": 0, "player2": 0}, {}

    def step(self, action_dict):
        self.num_moves += 1
        move1, move2 = int(action_dict["player1"]), int(action_dict["player2"])
        reward1, reward2 = score(move1, move2)
        observations = {"player1": move2, "player2": move1}
        return (observations, {"player1": reward1, "player2": reward2}, {"__all__": self.num_moves >= 10},
                {"__all__": False}, {})


__all__ = ["RockPaperScissors", "score"]
