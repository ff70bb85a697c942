"""Tic-tac-toe, by its old relayrl path: it lives at RLlib's path, relayrl/examples/envs/classes/multi_agent/
tic_tac_toe.py."""
from relayrl.examples.envs.classes.multi_agent.tic_tac_toe import TicTacToe  # noqa: F401
