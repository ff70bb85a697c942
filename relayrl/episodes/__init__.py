"""Episodes: the trajectories EnvRunners record and Learners train on (pure data: numpy, gymnasium spaces, no torch).

`SingleAgentEpisode` (one agent in one env) keeps each column in an `InfiniteLookbackBuffer`.
"""
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

__all__ = ["InfiniteLookbackBuffer", "SingleAgentEpisode"]
