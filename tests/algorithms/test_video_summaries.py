"""Training videos in TensorBoard: the newest video of each iteration, as an animated GIF image summary."""
import io
import os

import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.algorithms.video_summaries import VIDEO_TAG, NewVideos, gif_of_video
from relayrl.env.wrappers.video_files import parse_video_file_name, video_file_name, write_video
from relayrl.testing.tensorboard_events import tensorboard_events

pytest.importorskip("tensorboardX")


def read_images(logdir):
    """[(tag, step, Summary.Image)] from the run's TensorBoard event files."""
    return [(v.tag, event.step, v.image) for event in tensorboard_events(logdir)
            for v in event.summary.value if v.HasField("image")]


def test_each_iteration_with_a_new_video_adds_its_newest_to_tensorboard(tmp_path):
    config = (PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=10)
              .env_runners(num_envs_per_env_runner=4)
              .training(train_batch_size=600, minibatch_size=300, num_epochs=1)
              .debugging(seed=0, logger_config={"type": "json+tensorboard", "logdir": str(tmp_path / "run")}))
    algo = config.build_algo()
    try:
        results = [algo.train() for _ in range(2)]
        videos = sorted(os.listdir(os.path.join(algo.logdir, "videos")))
    finally:
        algo.stop()
    images = read_images(algo.logdir)
    assert [tag for tag, _, _ in images] == [VIDEO_TAG, VIDEO_TAG], images
    # At each iteration's step (that of its scalars), one image: that iteration's newest video.
    assert [step for _, step, _ in images] == [r["num_env_steps_sampled_lifetime"] for r in results]
    for iteration, (_, _, image) in enumerate(images, start=1):
        newest = max(parse_video_file_name(v) for v in videos if parse_video_file_name(v)[0] == iteration)
        assert image.encoded_image_string == gif_of_video(os.path.join(algo.logdir, "videos",
                                                                       video_file_name(*newest)))[0]
        assert image.encoded_image_string[:6] == b"GIF89a"
        assert (image.height, image.width, image.colorspace) == (200, 300, 3)  # CartPole's 400x600, halved


def test_a_json_logger_gets_no_video_summaries(tmp_path):
    config = (PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=5)
              .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
              .debugging(seed=0, logger_config={"type": "json", "logdir": str(tmp_path / "run")}))
    algo = config.build_algo()
    try:
        algo.train()
    finally:
        algo.stop()
    assert os.listdir(os.path.join(algo.logdir, "videos"))
    assert not [f for f in os.listdir(algo.logdir) if f.startswith("events.out.tfevents")]


def test_the_gif_plays_the_video_frames_at_its_frame_rate(tmp_path):
    from PIL import Image

    frames = [np.full((64, 96, 3), (40 * i, 255 - 40 * i, 128), np.uint8) for i in range(6)]
    path = write_video(frames, str(tmp_path / video_file_name(1, 0)), fps=25)
    gif, height, width = gif_of_video(path)
    image = Image.open(io.BytesIO(gif))
    assert (height, width) == (64, 96) == (image.height, image.width)
    assert image.n_frames == 6 and image.info["duration"] == 40
    for i, frame in enumerate(frames):
        image.seek(i)
        colour = np.asarray(image.convert("RGB"))[32, 48].astype(int)
        assert np.abs(colour - frame[32, 48]).max() <= 12, (i, colour, frame[32, 48])  # mp4 and palette loss


def test_new_videos_skips_old_partial_and_foreign_files(tmp_path):
    (tmp_path / video_file_name(1, 0)).write_bytes(b"from an earlier run")
    videos = NewVideos(str(tmp_path))
    for name in (video_file_name(2, 30), video_file_name(2, 10), "." + video_file_name(3, 0), "notes.txt"):
        (tmp_path / name).write_bytes(b"x")
    assert videos.take() == [str(tmp_path / video_file_name(2, 10)), str(tmp_path / video_file_name(2, 30))]
    assert videos.take() == []
