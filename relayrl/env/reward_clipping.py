"""The `clip_rewards` option: episodes (what the Learner trains on) get the clipped rewards, while the
returns reported (`episode_return_mean/min/max`) stay the env's own scores, as RLlib's and SB3's Atari
set-ups report game scores rather than sums of clipped rewards.

Every runner clips through its EnvStepper's clipping object (env_stepper.py): `RewardClipping` for a
vector env's reward array, `MultiAgentRewardClipping` for a MultiAgentVectorEnv's {agent_id: reward} dicts
(each agent's reward clipped; the score the sum of the agents' unclipped rewards)."""
from typing import Callable, Dict, List, Optional

import numpy as np


class RewardClipping:
    """`clipping(rewards)` clips one vector step's rewards and adds the unclipped ones to each sub-env's
    running score; `take_score(i)` hands out sub-env i's score when its episode ends (None without
    clipping: the episode's own return is the score)."""

    def __init__(self, clip, num_envs: int):
        self.scores = np.zeros(num_envs)
        self.use(clip)

    def use(self, clip) -> "RewardClipping":
        """Follow the `clip_rewards` option, which Tune's reset_config may change between sample() calls
        (an episode ongoing when clipping starts reports only the score from then on)."""
        option = (type(clip), clip)  # True (the sign) and 1.0 (clip to [-1, 1]) compare equal
        if getattr(self, "_option", None) != option:
            self._option, self._clip = option, clip_function(clip)
            self.active = self._clip is not None
        return self

    def __call__(self, rewards: np.ndarray) -> np.ndarray:
        """The clipped rewards; the unclipped ones are added to the sub-envs' scores."""
        if not self.active:
            return rewards
        self.scores += rewards
        return self._clip(rewards)

    def clipped(self, rewards: np.ndarray) -> np.ndarray:
        """The clipped rewards, keeping no score (for runners whose episodes sum the unclipped ones themselves)."""
        return self._clip(rewards) if self.active else rewards

    def take_score(self, env_index: int) -> Optional[float]:
        if not self.active:
            return None
        score, self.scores[env_index] = float(self.scores[env_index]), 0.0
        return score

    def restart(self) -> None:
        """All sub-envs start new episodes."""
        self.scores[:] = 0.0

    def get_state(self) -> Optional[List[float]]:
        return self.scores.tolist() if self.active else None

    def set_state(self, scores: Optional[List[float]]) -> None:
        if self.active and scores is not None:
            self.scores = np.asarray(scores, dtype=np.float64)


class MultiAgentRewardClipping(RewardClipping):
    """RewardClipping for a MultiAgentVectorEnv: `rewards` is one {agent_id: reward} dict per env."""

    def __call__(self, rewards: List[Dict]) -> List[Dict]:
        if not self.active:
            return rewards
        for i, by_agent in enumerate(rewards):
            self.scores[i] += sum(by_agent.values())
        return self.clipped(rewards)

    def clipped(self, rewards: List[Dict]) -> List[Dict]:
        if not self.active:
            return rewards
        clip = self._clip
        return [{agent_id: float(clip(reward)) for agent_id, reward in by_agent.items()} for by_agent in rewards]


def clip_function(clip) -> Optional[Callable[[np.ndarray], np.ndarray]]:
    """None/False: no clipping (None); True: the reward's sign; a number c: clip to [-c, c]."""
    if clip is True:
        return np.sign
    if clip:
        return lambda rewards: np.clip(rewards, -clip, clip)
    return None
