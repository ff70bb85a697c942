"""The old import path of `SingleAgentEpisode`: it lives in relayrl/episodes/ now."""
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

__all__ = ["SingleAgentEpisode"]
