"""The training videos on disk: `iteration-III_episode-EEE.mp4`, written whole or not at all.

`III` is the training iteration the episode ended in (1 = the first `train()`; 0 before any), six
digits; `EEE` is about the run's episode number, seven digits. Iteration first, both zero-padded: the
names sort in recording order. A video appears under its name only once complete (written under a
hidden name, then renamed), so a reader listing the folder while runners record never sees half a file.
"""
from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple

import numpy as np

__all__ = ["video_file_name", "parse_video_file_name", "write_video"]

_NAME = re.compile(r"^iteration-(\d+)_episode-(\d+)\.mp4$")


def video_file_name(iteration: int, episode: int) -> str:
    return f"iteration-{iteration:06d}_episode-{episode:07d}.mp4"


def parse_video_file_name(name: str) -> Optional[Tuple[int, int]]:
    """(iteration, episode) of a training video's file name; None for any other name."""
    match = _NAME.match(name)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def write_video(frames: List[np.ndarray], path: str, fps: int = 30) -> str:
    """An mp4 of `frames` (H x W x 3 uint8 each) at `path`, appearing there only once complete."""
    import imageio

    folder, name = os.path.split(path)
    os.makedirs(folder or ".", exist_ok=True)
    partial = os.path.join(folder, f".{name}")  # hidden, and still .mp4 so ffmpeg picks the container
    with imageio.get_writer(partial, fps=fps, macro_block_size=1) as writer:
        for frame in frames:
            writer.append_data(frame)
    os.replace(partial, path)
    return path
