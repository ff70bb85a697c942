"""Rock-paper-scissors, by its old relayrl path: the env and the heuristic modules live at RLlib's paths
(relayrl/examples/envs/classes/multi_agent/rock_paper_scissors.py, relayrl/examples/rl_modules/classes/
rock_paper_scissors_heuristic_rlm.py)."""
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
