"""use_worker_filter_stats / update_worker_filter_stats (RLlib's FilterManager.synchronize) on the Policy API's remote
runners, the new-stack state-sync options there (ignored, as RLlib does), and a restarted runner's filter.

Two remote runners each sample 10 steps of `Counting` per iteration; the driver's runner only holds its own first
reset (value 0). See test_policy_observation_filter.py for the known observation streams.
"""
import time

import numpy as np
import pytest

import examples.policy_gradient_custom_policy as pg
from tests.policy.test_policy_observation_filter import Counting, assert_stats, pushed_values

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def ray_local():
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def remote_config(**env_runners):
    config = pg.MyAlgo.get_default_config().environment(Counting, env_config={"length": 5}).env_runners(
        observation_filter="MeanStdFilter", num_env_runners=2, rollout_fragment_length=10,
        num_cpus_per_env_runner=0.5, **env_runners).training(train_batch_size=20)
    config.debugging(logger_config={"type": "none"}, seed=0)
    return config


def driver_stats(algo):
    return algo.env_runner_group.local_worker().filters["default_policy"].running_stats


def remote_states(algo):
    return algo.env_runner_group.foreach_worker(lambda w: w.filter_states()["default_policy"], local_worker=False)


def test_use_worker_filter_stats_false_discards_the_runners_deltas():
    algo = remote_config(use_worker_filter_stats=False).build_algo()
    try:
        handles = algo.env_runner_group.remote_env_runners  # RLlib's name, as on the new stack's group
        assert len(handles) == 2 and all(isinstance(h, ray.actor.ActorHandle) for h in handles)
        for _ in range(2):
            algo.train()
            assert driver_stats(algo).count == 1  # only its own first reset
            # update_worker_filter_stats (True): every remote runner holds the driver's statistics again
            assert [s["count"] for s in remote_states(algo)] == [1, 1]
    finally:
        algo.stop()


def test_update_worker_filter_stats_false_merges_but_runners_keep_their_own():
    algo = remote_config(update_worker_filter_stats=False).build_algo()
    try:
        for iteration in (1, 2):
            algo.train()
            own = pushed_values(10 * iteration)  # each remote runner's whole stream so far, its own only
            assert_stats(driver_stats(algo), np.concatenate([[0.0], own, own]))  # each delta merged once
            for state in remote_states(algo):
                assert state["count"] == len(own)
                np.testing.assert_allclose(state["mean"], [own.mean(), 2 * own.mean()], rtol=1e-12)
    finally:
        algo.stop()


def test_both_false_leave_driver_and_runners_apart():
    algo = remote_config(use_worker_filter_stats=False, update_worker_filter_stats=False).build_algo()
    try:
        algo.train()
        algo.train()
        assert driver_stats(algo).count == 1
        assert [s["count"] for s in remote_states(algo)] == [len(pushed_values(20))] * 2
    finally:
        algo.stop()


def test_new_stack_options_are_ignored_and_a_restarted_runner_starts_from_the_drivers_statistics():
    """merge/broadcast_env_runner_states are RLlib's new-stack options: the Policy API merges and broadcasts as
    by default. A runner Ray restarts takes the driver's statistics at once (it started empty before)."""
    algo = remote_config(merge_env_runner_states=False, broadcast_env_runner_states=False).fault_tolerance(
        restart_failed_env_runners=True, delay_between_env_runner_restarts_s=0.0).build_algo()
    try:
        algo.train()
        own = pushed_values(10)
        values = np.concatenate([[0.0], own, own])
        assert_stats(driver_stats(algo), values)
        assert [s["count"] for s in remote_states(algo)] == [len(values)] * 2
        group = algo.env_runner_group
        ray.kill(group._actors.actor(1), no_restart=True)
        for _ in range(50):  # ray.kill is asynchronous: ping until the group sees the runner down
            if len(group.foreach_worker(lambda runner: runner.ping(), local_worker=False)) < 2:
                break
            time.sleep(0.1)
        group.sample()  # the runner is rebuilt first, then samples 10 steps of a fresh env
        assert group.fault_tolerance_metrics()["num_remote_env_runner_restarts"] == 1
        (state, _) = remote_states(algo)  # (worker_index order)
        seen = np.concatenate([values, pushed_values(10)])  # the driver's statistics, then its own observations
        assert state["count"] == len(seen)
        np.testing.assert_allclose(state["mean"], [seen.mean(), 2 * seen.mean()], rtol=1e-12)
    finally:
        algo.stop()


def test_evaluation_config_use_worker_filter_stats_false_builds_and_trains():
    """RLlib's mean_std_filtering example's evaluation_config on a Policy algorithm (in-process runners)."""
    config = pg.MyAlgo.get_default_config().environment(Counting, env_config={"length": 5}).env_runners(
        observation_filter="MeanStdFilter", rollout_fragment_length=20).training(train_batch_size=20).evaluation(
        evaluation_interval=1, evaluation_duration=2, evaluation_duration_unit="episodes",
        evaluation_config={"explore": False, "use_worker_filter_stats": False})
    config.debugging(logger_config={"type": "none"}, seed=0)
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] >= 2
        assert driver_stats(algo).count == 25  # training's observations only
    finally:
        algo.stop()
