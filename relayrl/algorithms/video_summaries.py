"""Training videos in TensorBoard: after each iteration, the newest video finished in `video_dir` becomes an
animated image under the tag `videos/episode`, at the iteration's step (that of its scalars).

What TensorBoard shows as a video is an image summary holding an animated GIF; tensorboardX's add_video
writes one, but encodes it with moviepy. This writes the same summary with the GIF encoded by Pillow (which
imageio, already needed for the mp4 files, installs), so moviepy is not needed. The driver reads the video
back from disk, so runners on other machines (whose files it cannot see) add nothing. Only the newest
video of an iteration is added (one image per tag and step, as Tune logs videos); all stay as mp4 files.
"""
from __future__ import annotations

import io
import logging
import os
from typing import List, Tuple

import numpy as np

from relayrl.env.wrappers.video_files import parse_video_file_name

__all__ = ["VIDEO_TAG", "NewVideos", "TensorBoardVideos", "gif_of_video", "video_summary"]

logger = logging.getLogger("relayrl")

VIDEO_TAG = "videos/episode"
MAX_SIDE = 320  # pixels: frames are thinned to fit (every k-th pixel); full-size videos stay in the mp4s
_PALETTE_FRAMES = 8  # one 256-colour palette from this many frames across the video (per-frame palettes: ~10x slower)


class NewVideos:
    """The complete training videos in a folder that were not there at the last look."""

    def __init__(self, folder: str):
        self.folder = folder
        self._seen = set(self._videos())  # a reused video_dir's old files are not this run's

    def _videos(self) -> List[str]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        return [name for name in names if parse_video_file_name(name) is not None]

    def take(self) -> List[str]:
        """Paths of the videos new since the last call, oldest first (by iteration, then episode)."""
        new = [name for name in self._videos() if name not in self._seen]
        self._seen.update(new)
        return [os.path.join(self.folder, name) for name in sorted(new, key=parse_video_file_name)]


def gif_of_video(path: str) -> Tuple[bytes, int, int]:
    """(GIF bytes, height, width) of an mp4, thinned to MAX_SIDE pixels, at the mp4's frame rate."""
    import imageio
    from PIL import Image

    with imageio.get_reader(path) as reader:
        fps = float(reader.get_meta_data().get("fps") or 30)
        frames = [frame for frame in reader]
    if not frames:
        raise ValueError(f"{path} holds no frames")
    stride = -(-max(frames[0].shape[:2]) // MAX_SIDE)
    frames = [np.ascontiguousarray(frame[::stride, ::stride, :3]) for frame in frames]
    picks = np.linspace(0, len(frames) - 1, min(len(frames), _PALETTE_FRAMES)).astype(int)
    palette = Image.fromarray(np.concatenate([frames[i] for i in picks], axis=0)).quantize(colors=256)
    images = [Image.fromarray(frame).quantize(palette=palette, dither=Image.Dither.NONE) for frame in frames]
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=images[1:], loop=0,
                   duration=max(20, int(round(1000 / fps))))  # (browsers play GIF frames under 20 ms slower)
    height, width = frames[0].shape[:2]
    return buffer.getvalue(), height, width


def video_summary(tag: str, path: str):
    """A tensorboardX Summary with the video at `path` as an animated image (what add_video writes)."""
    from tensorboardX.proto.summary_pb2 import Summary

    gif, height, width = gif_of_video(path)
    image = Summary.Image(height=height, width=width, colorspace=3, encoded_image_string=gif)
    return Summary(value=[Summary.Value(tag=tag, image=image)])


class TensorBoardVideos:
    """An Algorithm's link from its video_dir to its ResultLogger's TensorBoard writer."""

    def __init__(self, folder: str, result_logger):
        self.new_videos, self.result_logger = NewVideos(folder), result_logger

    @classmethod
    def create(cls, config, result_logger):
        """None unless videos are recorded and the result logger can take them (ResultLogger.on_video)."""
        if not config.record_video_every_n_episodes or not callable(getattr(result_logger, "on_video", None)):
            return None
        return cls(config.video_dir, result_logger)

    def on_result(self, result) -> None:
        """After the iteration's result was logged: its newest video to TensorBoard (when it writes events)."""
        videos = self.new_videos.take()
        if not videos or not self.result_logger.writes_tensorboard:
            return
        try:
            self.result_logger.on_video(VIDEO_TAG, videos[-1], result)
        except Exception as error:  # a preview must not end a run; the mp4 stays on disk
            logger.warning("could not add %s to TensorBoard: %s: %s", videos[-1], type(error).__name__, error)
