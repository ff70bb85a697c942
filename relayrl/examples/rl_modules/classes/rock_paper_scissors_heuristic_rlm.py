"""RLlib's heuristic modules for rock-paper-scissors (`ray.rllib.examples.rl_modules.classes.
rock_paper_scissors_heuristic_rlm`), written for relayrl:

* `AlwaysSameHeuristicRLM`: a random first move in each episode, then always that move.
* `BeatLastHeuristicRLM`: the move that beats the opponent's last one (rock 0 < paper 1 < scissors 2 < rock), a
  random one when there is none (observation 3, PettingZoo's rps env after reset).

The heuristics output actions directly and cannot be trained: keep them out of `policies_to_train`.
"""
import numpy as np

from relayrl.core.columns import Columns
from relayrl.examples.envs.classes.multi_agent.rock_paper_scissors import AFTER_RESET, PAPER, ROCK, SCISSORS
from relayrl.modules.rl_module import RLModule


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


__all__ = ["AlwaysSameHeuristicRLM", "BeatLastHeuristicRLM"]
