"""record_video_every_n_episodes: about one video per N episodes of the whole run, into <logdir>/videos."""
import os

import gymnasium as gym
import pytest

from relayrl import PPOConfig
from relayrl.env.wrappers.video_files import parse_video_file_name, video_file_name
from relayrl.env.wrappers.video_recorder import VideoRecorder, is_recorded


@pytest.mark.parametrize("parallel_envs, every_n", [(1, 10), (4, 10), (3, 7), (16, 10)])
def test_the_recording_sub_env_stands_for_every_nth_episode_of_the_run(parallel_envs, every_n):
    own_episodes = 700
    recorded = sum(is_recorded(k, every_n, parallel_envs) for k in range(own_episodes))
    run_episodes = own_episodes * parallel_envs
    expected = min(own_episodes, -(-run_episodes // every_n))  # one per N, at most one per own episode
    assert abs(recorded - expected) <= 1


def test_training_writes_about_one_video_per_n_episodes_over_four_sub_envs(tmp_path):
    config = (PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=10)
              .env_runners(num_envs_per_env_runner=4)
              .training(train_batch_size=1000, minibatch_size=250, num_epochs=1)
              .debugging(seed=0, logger_config={"type": "json", "logdir": str(tmp_path / "run")}))
    algo = config.build_algo()
    try:
        for _ in range(3):
            result = algo.train()
        episodes = result["env_runners"]["num_episodes_lifetime"]
        videos_dir = os.path.join(algo.logdir, "videos")
    finally:
        algo.stop()  # closes the envs: a cut recorded episode is written too
    videos = sorted(f for f in os.listdir(videos_dir) if f.endswith(".mp4"))
    assert episodes >= 80, episodes
    # One video per 10 of the run's episodes (+1: the episode cut by stop()), not one per sub-env.
    assert episodes / 10 * 0.7 <= len(videos) <= episodes / 10 * 1.3 + 1, (len(videos), episodes)
    assert all(os.path.getsize(os.path.join(videos_dir, f)) > 0 for f in videos)
    # Named by the iteration the episode ended in (1 = the first train()) and the run's episode number;
    # sorting the names sorts by both.
    assert videos[0] == "iteration-000001_episode-0000000.mp4"
    names = [parse_video_file_name(f) for f in videos]
    assert None not in names and names == sorted(names)
    iterations = [iteration for iteration, _ in names]
    assert set(iterations) == {1, 2, 3}, iterations  # short CartPole episodes end in every iteration
    assert [episode for _, episode in names] == sorted(episode for _, episode in names)
    assert not [f for f in os.listdir(videos_dir) if f.startswith(".")]  # no partial files left


def test_evaluation_runners_record_nothing_and_video_dir_is_used(tmp_path):
    config = (PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=1,
                                      video_dir=str(tmp_path / "v"))
              .env_runners(num_envs_per_env_runner=1)
              .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
              .evaluation(evaluation_interval=1, evaluation_duration=2)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    sampled = result["env_runners"]["num_episodes_lifetime"]
    # Every training episode (+ the one cut by stop()), none of the 2 evaluation episodes.
    assert sampled <= len(os.listdir(tmp_path / "v")) <= sampled + 1


def test_an_env_that_cannot_render_frames_is_named():
    with pytest.raises(ValueError, match="render_mode=None.*render_mode"):
        VideoRecorder(gym.make("CartPole-v1"), "unused", 10, 1)


def test_video_file_names_sort_by_iteration_then_episode():
    names = [video_file_name(2, 5), video_file_name(10, 40), video_file_name(1, 1234567), video_file_name(2, 30)]
    assert [parse_video_file_name(n) for n in sorted(names)] == [(1, 1234567), (2, 5), (2, 30), (10, 40)]
    assert parse_video_file_name(".iteration-000001_episode-0000000.mp4") is None  # being written
    assert parse_video_file_name("episode-0000000.mp4") is None


def test_sub_envs_in_worker_processes_get_the_iteration_too(tmp_path):
    config = (PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=4, video_dir=str(tmp_path / "v"))
              .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="ASYNC")
              .training(train_batch_size=300, minibatch_size=150, num_epochs=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        for _ in range(2):
            algo.train()
    finally:
        algo.stop()
    iterations = {parse_video_file_name(f)[0] for f in os.listdir(tmp_path / "v")}
    assert iterations == {1, 2}, iterations
