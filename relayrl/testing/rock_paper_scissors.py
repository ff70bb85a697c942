"""Rock-paper-scissors, by its old relayrl path: the env and the heuristic modules live at RLlib's paths
(relayrl/examples/envs/classes/multi_agent/rock_paper_scissors.py, relayrl/examples/rl_modules/classes/
rock_paper_scissors_heuristic_rlm.py). Here also the heuristics as old-stack Policies (RLlib's rock_paper_scissors
dummies), for the Policy API: `AlwaysSameHeuristic` (a random first move in each episode, then always that move) and
`BeatLastHeuristic`. They see the observations one-hot, as the Policy runners preprocess Discrete ones, and cannot
be trained: keep them out of `policies_to_train`.
"""
import numpy as np

from relayrl.examples.envs.classes.multi_agent.rock_paper_scissors import (  # noqa: F401
    AFTER_RESET,
    BEATS,
    LIZARD,
    PAPER,
    ROCK,
    SCISSORS,
    SPOCK,
    RockPaperScissors,
    score,
)
from relayrl.examples.rl_modules.classes.rock_paper_scissors_heuristic_rlm import (  # noqa: F401
    AlwaysSameHeuristicRLM,
    BeatLastHeuristicRLM,
)
from relayrl.policy.policy import Policy


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
