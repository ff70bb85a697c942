"""Replay buffers for off-policy algorithms (DQN, SAC): store episodes, sample n-step transitions."""
from relayrl.replay.episode_replay_buffer import EpisodeReplayBuffer
from relayrl.replay.make_replay_buffer import make_replay_buffer
from relayrl.replay.multi_agent_episode_replay_buffer import (
    MultiAgentEpisodeReplayBuffer,
    MultiAgentPrioritizedEpisodeReplayBuffer,
)
from relayrl.replay.prioritized_episode_replay_buffer import PrioritizedEpisodeReplayBuffer

__all__ = ["EpisodeReplayBuffer", "PrioritizedEpisodeReplayBuffer", "MultiAgentEpisodeReplayBuffer",
           "MultiAgentPrioritizedEpisodeReplayBuffer", "make_replay_buffer"]
