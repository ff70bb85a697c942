"""`SampleAmount`: when a sample() call stops, and which finished episodes it returns."""
from typing import List, Optional


class SampleAmount:
    """`num_timesteps` env steps (counting all sub-envs), or, with `complete`, until the finished
    episodes hold that many; or `num_episodes` finished episodes, each sub-env owing a fixed share
    (keeping simply the first episodes to end would favour short episodes and bias evaluation
    returns low; episodes beyond a sub-env's share are dropped). With `count_agent_steps` (multi-agent,
    count_steps_by="agent_steps") the steps counted are agent steps."""

    def __init__(self, *, num_timesteps: Optional[int], num_episodes: Optional[int], complete: bool, num_envs: int,
                 count_agent_steps: bool = False):
        self._num_timesteps = num_timesteps
        self._num_episodes = num_episodes
        self._complete = complete
        self._quota = None if num_episodes is None else [
            num_episodes // num_envs + (i < num_episodes % num_envs) for i in range(num_envs)]
        self.done_episodes: List = []
        self._done_steps = 0
        self._count_agent_steps = count_agent_steps

    def reached(self, steps: int) -> bool:
        """Whether the call has sampled enough, after `steps` env steps."""
        if self._num_episodes is not None:
            return len(self.done_episodes) >= self._num_episodes
        return (self._done_steps if self._complete else steps) >= self._num_timesteps

    def wants(self, env_index: int) -> bool:
        """Whether the episode that just ended in sub-env `env_index` is returned (it then counts)."""
        quota = self._quota
        if quota is None:
            return True
        if quota[env_index] > 0:
            quota[env_index] -= 1
            return True
        return False

    @property
    def cuts_ongoing(self) -> bool:
        """Whether sample() hands out the ongoing episodes' chunks when it stops (it cuts them)."""
        return not self._complete

    @property
    def takes_every_episode(self) -> bool:
        """Whether every episode that ends is returned (no `num_episodes` quota), so `wants` is always True."""
        return self._quota is None

    def add(self, episode) -> None:
        self.done_episodes.append(episode)
        self._done_steps += episode.agent_steps() if self._count_agent_steps else len(episode)
