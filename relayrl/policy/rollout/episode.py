"""`PolicyEpisode`: the old API stack's `episode` object handed to policies and callbacks."""
import random
import time
from typing import Any

SINGLE_AGENT_ID = "agent0"  # the agent of a single-agent PolicyRunner's episodes


class PolicyEpisode:
    """One running episode: totals, per-agent rewards, user data and custom metrics (RLlib's old `Episode`)."""

    def __init__(self, env_id: int, worker=None):
        self.episode_id = random.randrange(2 ** 62)
        self.id_ = str(self.episode_id)
        self.env_id = env_id
        self.worker = worker
        self.length = 0
        self.total_reward = 0.0
        self.agent_rewards: dict[tuple, float] = {}
        self.user_data: dict[str, Any] = {}
        self.custom_metrics: dict[str, float] = {}
        self.hist_data: dict[str, list] = {}
        self.media: dict[str, Any] = {}
        self._last_infos: dict[Any, dict] = {}
        self._start = time.perf_counter()

    # the names relayrl's EpisodeStats reads
    def get_return(self) -> float:
        return self.total_reward

    def __len__(self) -> int:
        return self.length

    def get_duration_s(self) -> float:
        return time.perf_counter() - self._start

    def last_info_for(self, agent_id="agent0") -> dict:
        return self._last_infos.get(agent_id, {})

    def add_step(self, agent_id, policy_id, reward: float, info: dict) -> None:
        key = (agent_id, policy_id)
        self.agent_rewards[key] = self.agent_rewards.get(key, 0.0) + float(reward)
        self.total_reward += float(reward)
        self._last_infos[agent_id] = info
