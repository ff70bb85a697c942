"""Videos of the agent during training: every N-th episode of the whole run, not one per sub-env.

`config.environment(record_video_every_n_episodes=N)`: the run's episodes are spread over
P = runners x sub-envs that finish episodes at about the same rate, so one sub-env (sub-env 0 of the
first sampling runner) records P of every N of its own episodes, evenly spaced; the run then gets about
one video per N episodes wherever its runners live (with P > N: every episode of that sub-env, one video
per P episodes). Frames come from the sub-env's `render()`
(render_mode="rgb_array", asked for through env_config) and are written with imageio's ffmpeg plugin.
File names (video_files.py): `iteration-III_episode-EEE.mp4`, the training iteration the episode ended in
(the Algorithm tells the recording runner at the start of each `train()`: EnvRunnerGroup.set_training_iteration)
and the run's episode number (this sub-env's count x P, so about the run's count).
"""
from __future__ import annotations

import os
from typing import List, Optional

import gymnasium as gym
import numpy as np

from relayrl.env.wrappers.video_files import video_file_name, write_video

__all__ = ["VideoRecorder", "video_recorder_for", "with_video_dir", "is_recorded", "records_video",
           "recording_worker_index", "require_video_writer", "write_video", "ITERATION_ATTRIBUTE"]

# The recorder's attribute holding the training iteration (set through the vector env's set_attr, which
# reaches sub-envs in worker processes too).
ITERATION_ATTRIBUTE = "relayrl_training_iteration"


def require_video_writer() -> None:
    """Fail early, naming the extra, when imageio or its ffmpeg plugin is missing."""
    try:
        import imageio  # noqa: F401
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        raise ImportError('Recording videos needs imageio and its ffmpeg plugin: pip install "relayrl[video]".') from None


def is_recorded(own_episode: int, every_n_episodes: int, parallel_envs: int) -> bool:
    """Whether the recording sub-env's `own_episode`-th episode (from 0) is the run's next N-th one.

    Its k-th episode is about the run's (k * P)-th; it is recorded when that passes a multiple of N.
    """
    if own_episode == 0:
        return True
    return (own_episode * parallel_envs) // every_n_episodes != ((own_episode - 1) * parallel_envs) // every_n_episodes


def recording_worker_index(config, num_workers: int) -> Optional[int]:
    """The worker_index of the runner whose sub-env 0 records (the first that samples); None: no videos."""
    if not config.record_video_every_n_episodes or config.in_evaluation:
        return None
    return 1 if num_workers > 0 else 0


def records_video(config, worker_index: int, num_workers: int, vector_index: int) -> bool:
    """Whether this sub-env is the run's recording one: sub-env 0 of the first runner that samples."""
    return vector_index == 0 and worker_index == recording_worker_index(config, num_workers)


def with_video_dir(config, logdir: Optional[str]):
    """The (frozen) config with video_dir set to <logdir>/videos when videos are recorded and none is given."""
    if not config.record_video_every_n_episodes or config.video_dir is not None:
        return config
    require_video_writer()
    config = config.copy(copy_frozen=False)
    config.video_dir = os.path.join(logdir or os.getcwd(), "videos")
    config.freeze()
    return config


def video_recorder_for(config, worker_index: int, num_workers: int, iteration: int = 0):
    """None when this runner records nothing, else vector_index -> (env -> VideoRecorder) or None.

    `iteration`: the training iteration its file names start with (later ones: ITERATION_ATTRIBUTE)."""
    if not records_video(config, worker_index, num_workers, vector_index=0):
        return None
    require_video_writer()
    parallel_envs = max(1, num_workers) * config.num_envs_per_env_runner
    every_n = config.record_video_every_n_episodes
    folder = config.video_dir or os.path.join(os.getcwd(), "videos")

    def recorder(env):
        return VideoRecorder(env, folder, every_n, parallel_envs, iteration=iteration)
    return lambda i: recorder if i == 0 else None


class VideoRecorder(gym.Wrapper):
    """Records the episodes of the env it wraps that stand for every N-th episode of the run (is_recorded)."""

    def __init__(self, env: gym.Env, folder: str, every_n_episodes: int, parallel_envs: int,
                 fps: Optional[int] = None, iteration: int = 0):
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(f"record_video_every_n_episodes needs an env that renders frames, but {env} has "
                             f"render_mode={env.render_mode!r}: make its constructor take render_mode (env_config "
                             "gets render_mode='rgb_array' when videos are recorded).")
        self.folder, self.every_n_episodes, self.parallel_envs = folder, every_n_episodes, parallel_envs
        self.fps = fps or int(env.metadata.get("render_fps") or 30)
        self.episodes_started = 0
        setattr(self, ITERATION_ATTRIBUTE, iteration)  # the training iteration in the file names
        self._frames: Optional[List[np.ndarray]] = None

    def reset(self, **kwargs):
        self._finish()
        obs, info = self.env.reset(**kwargs)
        recording = is_recorded(self.episodes_started, self.every_n_episodes, self.parallel_envs)
        self.episodes_started += 1
        self._frames = [self.env.render()] if recording else None
        return obs, info

    def step(self, action):
        result = self.env.step(action)
        if self._frames is not None:
            self._frames.append(self.env.render())
            if result[2] or result[3]:
                self._finish()
        return result

    def _finish(self) -> None:
        """Write the episode being recorded (also a cut one, at the next reset or close)."""
        frames, self._frames = self._frames, None
        if frames:
            episode = (self.episodes_started - 1) * self.parallel_envs
            name = video_file_name(getattr(self, ITERATION_ATTRIBUTE), episode)
            write_video(frames, os.path.join(self.folder, name), fps=self.fps)

    def close(self):
        self._finish()
        return super().close()
