"""Remote EnvRunners that crash, die, hang or get killed: training goes on (or stops with a clear error).

Actor starts dominate the time (5-10 s per test on an idle 2-core machine); the variations of the
restart path are marked slow.

Each FaultyEnv fails exactly once (a marker file), on worker_index 1, so a restarted runner samples
normally and every run ends with all runners healthy.
"""
import threading
import time

import numpy as np
import pytest
import ray

from relayrl import PPOConfig, RLlibCallback
from relayrl.distributed.env_runner_actors import EnvRunnerFailedError
from relayrl.testing.faulty_envs import FaultyEnv

FRAGMENT_STEPS = 20  # train_batch_size 40 over 2 runners: each sample() is 20 env steps


class RecordRecreated(RLlibCallback):
    calls = []

    def on_env_runners_recreated(self, *, algorithm, env_runner_group, env_runner_indices, is_evaluation, **kw):
        RecordRecreated.calls.append((list(env_runner_indices), is_evaluation))


def config(tmp_path, *, num_env_runners=2, **env_config):
    env_config = {"episode_len": 5, "marker": str(tmp_path / "failed"), **env_config}
    return (
        PPOConfig()
        .environment(FaultyEnv, env_config=env_config)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=1, num_cpus_per_env_runner=0.5,
                     sample_timeout_s=10.0)
        .fault_tolerance(delay_between_env_runner_restarts_s=0.0)
        .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
        .callbacks(RecordRecreated)
        .debugging(seed=0)
    )


def assert_weights_in_sync(algo):
    learner = algo.learner_group.get_weights(inference_only=True)
    learner = learner.get("default_policy", learner)
    states = algo.env_runner_group.foreach_env_runner(
        lambda r: {k: v.detach().numpy().copy() for k, v in r.module.state_dict().items()}, local_env_runner=False)
    assert len(states) == algo.env_runner_group.num_remote_env_runners()
    for state in states:
        for key, value in state.items():
            np.testing.assert_array_equal(value, np.asarray(learner[key]))


def train_through_failure(algo, iterations=3):
    results = [algo.train() for _ in range(iterations)]
    assert [r["training_iteration"] for r in results] == list(range(1, iterations + 1))
    return results


@pytest.mark.parametrize("failure,extra", [
    ("raise", {"fail_at_step": [3, 30], "seed": 7}),   # the env raises at a random step
    ("exit", {"fail_at_step": 7}),                      # the env kills its process (os._exit)
    ("hang", {"fail_at_step": 7}),                      # the env sleeps forever: sample_timeout_s
])
def test_failed_runner_is_restarted_and_training_goes_on(tmp_path, failure, extra):
    RecordRecreated.calls = []
    cfg = config(tmp_path, failure=failure, **extra)
    if failure == "hang":
        cfg.env_runners(sample_timeout_s=3.0)
    algo = cfg.build_algo()
    try:
        results = train_through_failure(algo)
        assert (tmp_path / "failed").exists()  # the failure did happen
        last = results[-1]
        assert last["num_healthy_env_runners"] == 2
        assert last["num_remote_env_runner_restarts"] == last["num_env_runner_restarts"] == 1
        assert sum(r["num_env_steps_lost"] for r in results) == FRAGMENT_STEPS
        assert last["num_env_steps_lost_lifetime"] == FRAGMENT_STEPS
        assert all(r["num_env_steps_sampled_lifetime"] >= 40 * r["training_iteration"] for r in results)
        assert RecordRecreated.calls == [([1], False)]
        flags = algo.env_runner_group.foreach_env_runner(lambda r: (r.worker_index, r.recreated_worker),
                                                         local_env_runner=False)
        assert flags == [(1, True), (2, False)]
        assert_weights_in_sync(algo)
    finally:
        algo.stop()


@pytest.mark.slow  # several actor starts (restarts included)
def test_runner_killed_mid_sample_is_restarted(tmp_path):
    RecordRecreated.calls = []
    # Slow steps make one sample() take ~1 s, so the kill lands in the middle of it.
    algo = config(tmp_path, fail_at_step=10**9, step_sleep_s=0.05).build_algo()
    try:
        victim = algo.env_runner_group.remote_env_runners[0].actor
        killer = threading.Timer(0.4, lambda: ray.kill(victim, no_restart=True))
        killer.start()
        first = algo.train()
        killer.join()
        results = [first, algo.train()]
        assert results[-1]["num_healthy_env_runners"] == 2
        assert results[-1]["num_remote_env_runner_restarts"] == 1
        assert first["num_env_steps_lost"] == FRAGMENT_STEPS
        assert RecordRecreated.calls == [([1], False)]
        assert_weights_in_sync(algo)
    finally:
        algo.stop()


@pytest.mark.slow  # several actor starts (restarts included)
def test_curriculum_env_config_survives_a_restart(tmp_path):
    algo = config(tmp_path, fail_at_step=12).build_algo()
    try:
        def set_length(runner):  # RLlib's curriculum pattern: change the runner's env_config, rebuild envs
            runner.config.environment(env_config={**runner.config.env_config, "episode_len": 4})
            runner.make_env()

        algo.env_runner_group.foreach_env_runner(set_length, local_env_runner=False)
        train_through_failure(algo, iterations=2)
        assert algo.env_runner_group.num_remote_env_runner_restarts() == 1
        assert algo.env_runner_group.foreach_env(lambda env: env.episode_len) == [[4], [4]]
    finally:
        algo.stop()


def test_without_restarts_the_error_names_the_runner_and_the_env_traceback(tmp_path):
    cfg = config(tmp_path, failure="raise", fail_at_step=3).fault_tolerance(restart_failed_env_runners=False)
    algo = cfg.build_algo()
    try:
        with pytest.raises(EnvRunnerFailedError) as info:
            algo.train()
        message = str(info.value)
        assert "worker_index=1" in message
        assert "FaultyEnvError" in message and "failed at step 3" in message
        assert "faulty_envs.py" in message  # the env's traceback
        assert "restart_failed_env_runners=True" in message  # how to fix it
    finally:
        algo.stop()


@pytest.mark.slow  # several actor starts (restarts included)
def test_ignored_failures_go_on_with_fewer_runners(tmp_path):
    cfg = config(tmp_path, failure="exit", fail_at_step=3).fault_tolerance(restart_failed_env_runners=False,
                                                                           ignore_env_runner_failures=True)
    algo = cfg.build_algo()
    try:
        results = train_through_failure(algo)
        assert results[-1]["num_healthy_env_runners"] == 1
        assert results[-1]["num_remote_env_runner_restarts"] == 0
        assert algo.env_runner_group.healthy_env_runner_ids() == [2]
        assert results[-1]["num_env_steps_sampled_lifetime"] >= 3 * 40  # runner 2 samples the whole batch
    finally:
        algo.stop()


def test_zero_samples_is_an_error_naming_the_cause(tmp_path):
    cfg = config(tmp_path, num_env_runners=1, failure="raise", fail_at_step=3).fault_tolerance(
        restart_failed_env_runners=False, ignore_env_runner_failures=True)
    algo = cfg.build_algo()
    try:
        with pytest.raises(RuntimeError, match=r"no healthy remote EnvRunner is left.*worker_index=1.*FaultyEnvError"):
            algo.train()
    finally:
        algo.stop()


def test_failed_evaluation_runner_is_restarted(tmp_path):
    RecordRecreated.calls = []
    cfg = config(tmp_path, fail_at_step=10**9).evaluation(
        evaluation_interval=1, evaluation_num_env_runners=1, evaluation_duration=2,
        evaluation_config={"env_config": {"fail_at_step": 3, "failure": "exit"}})
    algo = cfg.build_algo()
    try:
        first = algo.train()  # the eval runner dies: no episodes this time, training goes on
        assert first["evaluation"]["env_runners"]["num_episodes"] == 0
        second = algo.train()  # replaced before the next evaluation
        assert second["evaluation"]["env_runners"]["num_episodes"] == 2
        assert RecordRecreated.calls == [([1], True)]
        assert algo.eval_env_runner_group.num_remote_env_runner_restarts() == 1
        assert second["num_remote_env_runner_restarts"] == 0  # the training runners never failed
    finally:
        algo.stop()


@pytest.mark.slow  # several actor starts (restarts included)
def test_restart_waits_for_the_delay(tmp_path):
    cfg = config(tmp_path, failure="raise", fail_at_step=3).fault_tolerance(delay_between_env_runner_restarts_s=3.0)
    algo = cfg.build_algo()
    try:
        begin = time.monotonic()
        first = algo.train()  # runner 2 fills the batch meanwhile: no waiting for the restart
        assert first["num_healthy_env_runners"] == 1 and time.monotonic() - begin < 3.0
        time.sleep(3.0)
        second = algo.train()
        assert second["num_healthy_env_runners"] == 2 and second["num_remote_env_runner_restarts"] == 1
    finally:
        algo.stop()


class RenderingFaultyEnv(FaultyEnv):
    """A FaultyEnv that renders (tiny) frames, so its runner can record videos."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, config=None):
        super().__init__(config)
        self.render_mode = (config or {}).get("render_mode")

    def render(self):
        return np.full((16, 16, 3), 10 * (self.steps_taken % 20), np.uint8)


@pytest.mark.slow  # several actor starts (restarts included)
def test_a_restored_recording_runner_is_told_the_iteration(tmp_path):
    import os

    from relayrl.env.wrappers.video_files import parse_video_file_name

    cfg = config(tmp_path, fail_at_step=30).environment(RenderingFaultyEnv, record_video_every_n_episodes=1,
                                                        video_dir=str(tmp_path / "videos"))
    algo = cfg.build_algo()
    try:
        train_through_failure(algo)
        assert algo.env_runner_group.num_remote_env_runner_restarts() == 1
    finally:
        algo.stop()
    names = [parse_video_file_name(f) for f in os.listdir(tmp_path / "videos")]
    assert None not in names and {iteration for iteration, _ in names} == {1, 2, 3}, sorted(names)
    # The restored runner counts its episodes from 0 again: its first video carries the iteration it was
    # restored in (iteration 0 would mean it was never told), the first runner's first video iteration 1.
    firsts = sorted(iteration for iteration, episode in names if episode == 0)
    assert len(firsts) == 2 and firsts[0] == 1 and firsts[1] >= 2, sorted(names)
