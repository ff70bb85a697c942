"""`EnvRenderCallback` (from RLlib's example script of this name): renders sub-env 0 of each EnvRunner at every
step and logs, per sample() call, a video of the best and of the worst episode that ended in it, as
`episode_videos_best` / `episode_videos_worst` in `env_runners/` of the results: arrays of shape
(1, T, 3, H, W) uint8, the layout TensorBoard's and WandB's video loggers take.

    config.callbacks(EnvRenderCallback)   # the env must render: render_mode="rgb_array"

relayrl can also write videos itself: `config.env_runners(record_video_every_n_episodes=...)`
(docs/architecture.md); this callback shows how to do it by hand with the callback and metrics APIs.
"""
from typing import Optional, Sequence

import gymnasium as gym
import numpy as np

from relayrl.callbacks import RLlibCallback
from relayrl.core.images import resize
from relayrl.env.vector.vector_multi_agent_env import VectorMultiAgentEnv

_FRAMES = "render_images"
VIDEO_HEIGHT, VIDEO_WIDTH = 64, 96  # small frames: videos travel with every result


class EnvRenderCallback(RLlibCallback):
    def __init__(self, env_runner_indices: Optional[Sequence[int]] = None):
        """`env_runner_indices`: the EnvRunners that render (their worker_index); None: all of them."""
        super().__init__()
        self._env_runner_indices = env_runner_indices
        self._best = (None, float("-inf"))  # (video, return) of this sample() call's best episode
        self._worst = (None, float("inf"))

    def _renders(self, env_runner) -> bool:
        return self._env_runner_indices is None or env_runner.worker_index in self._env_runner_indices

    def on_episode_step(self, *, episode, env_runner, env, env_index, **kwargs) -> None:
        if not self._renders(env_runner) or env_index != 0:
            return
        unwrapped = env.unwrapped
        sub_env = unwrapped.envs[0] if isinstance(unwrapped, (gym.vector.VectorEnv, VectorMultiAgentEnv)) else env
        frame = resize(np.asarray(sub_env.render()), VIDEO_HEIGHT, VIDEO_WIDTH)
        episode.custom_data.setdefault(_FRAMES, []).append(np.transpose(frame, (2, 0, 1)))  # channels first

    def on_episode_end(self, *, episode, env_runner, env_index, **kwargs) -> None:
        frames = episode.custom_data.get(_FRAMES)
        if not self._renders(env_runner) or not frames:
            return
        episode_return = episode.get_return()
        if episode_return > self._best[1] or episode_return < self._worst[1]:
            video = np.stack(frames)[None]  # (1, T, C, H, W)
            if episode_return > self._best[1]:
                self._best = (video, episode_return)
            if episode_return < self._worst[1]:
                self._worst = (video, episode_return)

    def on_sample_end(self, *, env_runner, metrics_logger, **kwargs) -> None:
        # reduce=None keeps every runner's video (a mean over pixels makes no sense); cleared at each reduce.
        for key, (video, _) in (("episode_videos_best", self._best), ("episode_videos_worst", self._worst)):
            if video is not None:
                metrics_logger.log_value(key, video, reduce=None, clear_on_reduce=True)
        self._best, self._worst = (None, float("-inf")), (None, float("inf"))
