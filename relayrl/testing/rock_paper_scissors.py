"""Rock-paper-scissors for multi-agent examples (RLlib's example env and heuristic modules, written for relayrl):

* `RockPaperScissors`: a MultiAgentEnv of two players moving at once for 10 steps; the winner of a step gets +1,
  the loser -1; each player observes the opponent's last move (0 after reset). `sheldon_cooper_mode=True` adds
  lizard (3) and Spock (4).
* `AlwaysSameHeuristicRLM`: a random first move in each episode, then always that move.
* `BeatLastHeuristicRLM`: the move that beats the opponent's last one (rock 0 < paper 1 < scissors 2 < rock), a
  random one when there is none (observation 3, PettingZoo's rps env after reset).
* `AlwaysSameHeuristic` / `BeatLastHeuristic`: the same two as old-stack Policies (RLlib's rock_paper_scissors
  dummies), for the Policy API; they see the observations one-hot, as the Policy runners preprocess Discrete ones.

The heuristics output actions directly and cannot be trained: keep them out of `policies_to_train`.
"""
import gymnasium as gym
import numpy as np

from relayrl.core.columns import Columns
from relayrl.env.multi_agent_env import MultiAgentEnv
from relayrl.modules.rl_module import RLModule
from relayrl.policy.policy import Policy

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


class _Heuristic(RLModule):
    def _forward_exploration(self, batch, **kwargs):
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} is not trainable: leave its module id out of "
                                  "config.multi_agent(policies_to_train=...).")


class AlwaysSameHeuristicRLM(_Heuristic):
    def setup(self) -> None:
        self._moves = {}  # the move of the episode in each row (vector env index)

    def _forward_inference(self, batch, **kwargs):
        actions = []
        for row, obs in enumerate(np.asarray(batch[Columns.OBS]).reshape(-1)):
            if obs == AFTER_RESET or row not in self._moves:
                self._moves[row] = int(np.random.choice([ROCK, PAPER, SCISSORS]))
            actions.append(self._moves[row])
        return {Columns.ACTIONS: np.array(actions)}


class BeatLastHeuristicRLM(_Heuristic):
    def _forward_inference(self, batch, **kwargs):
        answer = {ROCK: PAPER, PAPER: SCISSORS, SCISSORS: ROCK}
        return {Columns.ACTIONS: np.array([answer.get(int(obs), int(np.random.choice([ROCK, PAPER, SCISSORS])))
                                           for obs in np.asarray(batch[Columns.OBS]).reshape(-1)])}


class _HeuristicPolicy(Policy):
    def learn_on_batch(self, samples):
        return {}  # nothing to learn

    def get_weights(self):
        return {}

    def set_weights(self, weights) -> None:
        pass


class AlwaysSameHeuristic(_HeuristicPolicy):
    """A random first move in each episode (its initial state), then always that move."""

    def get_initial_state(self):
        return [np.random.choice([ROCK, PAPER, SCISSORS])]

    def compute_actions(self, obs_batch, state_batches=None, prev_action_batch=None, prev_reward_batch=None,
                        info_batch=None, episodes=None, **kwargs):
        return np.asarray(state_batches[0]), list(state_batches), {}


class BeatLastHeuristic(_HeuristicPolicy):
    """The move that beats the opponent's last one (its one-hot observation)."""

    def compute_actions(self, obs_batch, state_batches=None, prev_action_batch=None, prev_reward_batch=None,
                        info_batch=None, episodes=None, **kwargs):
        moves = range(np.shape(obs_batch)[1])
        last = [int(np.argmax(obs)) for obs in obs_batch]
        return np.array([next(move for move in moves if opponent in BEATS[move]) for opponent in last]), [], {}
