"""merge_env_runner_states / broadcast_env_runner_states (RLlib's connector state sync) with remote EnvRunners.

`CountingEnv` observes [t, env_id] with env_id = 100 x worker_index, so a MeanStdFilter's mean in the second
dimension says whose observations it holds: 100 runner 1's, 200 runner 2's, 150 both (equal counts).
"""
import time

import numpy as np
import pytest

from relayrl import APPOConfig, PPOConfig
from relayrl.testing.envs import CountingEnv

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def ray_local():
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def config(cls=PPOConfig, **env_runners):
    return (cls().environment(CountingEnv, env_config={"episode_len": 5})
            .env_runners(num_env_runners=2, num_envs_per_env_runner=1, num_cpus_per_env_runner=0.5,
                         observation_filter="MeanStdFilter", rollout_fragment_length=10, **env_runners)
            .training(train_batch_size=20, minibatch_size=20, num_epochs=1)
            .debugging(seed=0))


def stat(runner):
    """(count, mean) of the runner's MeanStdFilter; (0, None) before it saw anything."""
    s = runner.get_state()["env_to_module_connector"].get("MeanStdFilter", {}).get("stat")
    return (0, None) if s is None else (s["count"], np.asarray(s["mean"]))


def remote_stats(algo):
    return algo.env_runner_group.foreach_env_runner(stat, local_env_runner=False)


KNOWN = {"count": 4, "mean": [7.0, 7.0], "m2": [1.0, 1.0]}  # driver statistics no env produces


def set_driver_stat(algo, value=KNOWN):
    algo.env_runner.set_state({"env_to_module_connector": {"MeanStdFilter": {"stat": dict(value)}}})


def test_defaults_merge_and_broadcast_and_the_old_stack_options_change_nothing():
    # use_worker_filter_stats / update_worker_filter_stats are the Policy API's: accepted here, no effect (RLlib's).
    algo = config(use_worker_filter_stats=False, update_worker_filter_stats=False).build_algo()
    try:
        assert (algo.config.merge_env_runner_states, algo.config.broadcast_env_runner_states) == ("training_only", True)
        algo.train()
        count, mean = stat(algo.env_runner)
        assert count > 0 and mean[1] == pytest.approx(150.0)
        assert all(c == count and np.allclose(m, mean) for c, m in remote_stats(algo))
    finally:
        algo.stop()


def test_broadcast_false_merges_on_the_driver_and_runners_keep_their_own():
    algo = config(broadcast_env_runner_states=False).fault_tolerance(
        restart_failed_env_runners=True, delay_between_env_runner_restarts_s=0.0).build_algo()
    try:
        for _ in range(2):  # the second sync merges only what each runner added since the first
            algo.train()
            (c1, m1), (c2, m2) = remote_stats(algo)
            assert (m1[1], m2[1]) == (pytest.approx(100.0), pytest.approx(200.0))  # never got the other's data
            count, mean = stat(algo.env_runner)
            assert count == c1 + c2  # each observation counted once
            assert mean[1] == pytest.approx((100.0 * c1 + 200.0 * c2) / (c1 + c2))
        # A restarted runner starts from the driver's statistics, and only what it adds is merged next.
        group = algo.env_runner_group
        ray.kill(group._actors.actor(1), no_restart=True)
        for _ in range(50):  # ray.kill is asynchronous: ping until the group sees the runner down
            if len(group.foreach_env_runner(lambda runner: runner.ping(), local_env_runner=False)) < 2:
                break
            time.sleep(0.1)
        assert group.probe_unhealthy_env_runners() == [1]
        assert stat(group.remote_env_runners[0])[0] == count
        algo.train()
        (n1, _), (n2, _) = remote_stats(algo)
        assert stat(algo.env_runner)[0] == n1 + (n2 - c2)
    finally:
        algo.stop()


def test_merge_false_broadcasts_the_drivers_statistics():
    algo = config(merge_env_runner_states=False).build_algo()
    try:
        set_driver_stat(algo)
        algo.train()
        assert stat(algo.env_runner)[0] == KNOWN["count"]  # the runners' observations are not gathered
        for count, mean in remote_stats(algo):  # their own statistics are replaced by the driver's
            assert count == KNOWN["count"] and np.allclose(mean, KNOWN["mean"])
    finally:
        algo.stop()


def test_merge_and_broadcast_false_leave_every_runner_its_own():
    algo = config(merge_env_runner_states=False, broadcast_env_runner_states=False).build_algo()
    try:
        set_driver_stat(algo)
        algo.train()
        first = remote_stats(algo)
        algo.train()
        assert stat(algo.env_runner)[0] == KNOWN["count"]
        for (c_before, _), (count, mean), own in zip(first, remote_stats(algo), (100.0, 200.0)):
            assert count > c_before > 0 and mean[1] == pytest.approx(own)
    finally:
        algo.stop()


def evaluated(**evaluation_config):
    return config().evaluation(evaluation_interval=1, evaluation_num_env_runners=1, evaluation_duration=2,
                               evaluation_duration_unit="episodes", evaluation_config=evaluation_config)


def eval_stat(algo):
    return algo.eval_env_runner_group.foreach_env_runner(stat, local_env_runner=False)[0]


@pytest.mark.slow
def test_evaluation_runners_per_merge_and_broadcast():
    """Three algorithms with a remote evaluation runner (12 s at load 3 on 2 cores, 38 s at load 11)."""
    # "training_only" (default): the evaluation runner gets the training statistics and adds its own episodes.
    # True: the evaluation runners' own pool, merged among them (as RLlib). Evaluation broadcast=False: its own.
    counts = {}
    for name, evaluation_config in (("training_only", {}), ("merged", {"merge_env_runner_states": True}),
                                    ("own", {"broadcast_env_runner_states": False})):
        algo = evaluated(**evaluation_config).build_algo()
        try:
            algo.train()
            train_count = stat(algo.env_runner)[0]
            count, mean = eval_stat(algo)
            counts[name] = (train_count, count, mean)
            algo.train()
            counts[name + "2"] = (stat(algo.env_runner)[0], eval_stat(algo)[0])
        finally:
            algo.stop()
    train_count, count, mean = counts["training_only"]
    _, merged_count, merged_mean = counts["merged"]
    _, own_count, own_mean = counts["own"]
    evaluation_obs = own_count  # the evaluation runner's own observations in one evaluation
    assert 0 < evaluation_obs < train_count
    assert count == train_count + evaluation_obs
    assert merged_count == evaluation_obs and merged_mean[1] == pytest.approx(100.0)  # (eval worker_index 1)
    assert own_mean[1] == pytest.approx(100.0)
    assert counts["own2"][1] == 2 * evaluation_obs  # kept and added to, never replaced
    assert counts["merged2"][1] == 2 * evaluation_obs  # merged once per observation, no training data


@pytest.mark.slow
def test_appo_async_broadcast_false_keeps_the_runners_own_statistics():
    algo = config(APPOConfig, broadcast_env_runner_states=False).build_algo()
    try:
        for _ in range(3):
            algo.train()
        (c1, m1), (c2, m2) = remote_stats(algo)
        assert (m1[1], m2[1]) == (pytest.approx(100.0), pytest.approx(200.0))
        assert 0 < stat(algo.env_runner)[0] <= c1 + c2  # merged on the driver (up to the last samples taken)
    finally:
        algo.stop()


@pytest.mark.parametrize("kwargs, message", [
    ({"merge_env_runner_states": "evaluation"}, "merge_env_runner_states must be a bool or 'training_only'"),
    ({"broadcast_env_runner_states": "yes"}, "broadcast_env_runner_states must be a bool"),
    ({"use_worker_filter_stats": None}, "use_worker_filter_stats must be a bool"),
    ({"update_worker_filter_stats": 1}, "update_worker_filter_stats must be a bool"),
])
def test_bad_values_are_refused_and_the_config_is_unchanged(kwargs, message):
    cfg = PPOConfig()
    before = cfg.to_dict()
    with pytest.raises(ValueError, match=message):
        cfg.env_runners(**kwargs)
    with pytest.raises(ValueError, match=message):
        cfg.update_from_dict(kwargs)
    assert cfg.to_dict() == before


def test_rllibs_mean_std_filtering_evaluation_config_builds_and_trains():
    """examples/connectors/mean_std_filtering.py's evaluation_config, with its MeanStdFilter connector."""
    from relayrl.connectors import MeanStdFilter

    cfg = evaluated(explore=False, use_worker_filter_stats=False).env_runners(
        observation_filter="NoFilter", env_to_module_connector=lambda env, spaces, device: MeanStdFilter())
    algo = cfg.build_algo()
    try:
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] >= 2
        train_count, _ = stat(algo.env_runner)
        assert all(c == train_count for c, _ in remote_stats(algo))  # evaluation's observations are not in it
        assert eval_stat(algo)[0] > train_count  # the training statistics plus the evaluation episodes'
        assert algo.config.get_evaluation_config_object().use_worker_filter_stats is False
    finally:
        algo.stop()


def test_the_options_survive_save_and_restore(tmp_path):
    algo = config(merge_env_runner_states=True, broadcast_env_runner_states=False,
                  use_worker_filter_stats=False).build_algo()
    try:
        algo.train()
        path = algo.save_to_path(str(tmp_path / "ckpt"))
    finally:
        algo.stop()
    from relayrl import Algorithm

    restored = Algorithm.from_checkpoint(path, trusted=[CountingEnv])
    try:
        cfg = restored.config
        assert (cfg.merge_env_runner_states, cfg.broadcast_env_runner_states, cfg.use_worker_filter_stats) == \
            (True, False, False)
    finally:
        restored.stop()


@pytest.mark.parametrize("broadcast", [True, False])
def test_a_restore_gives_every_remote_runner_the_statistics_and_training_adds_to_them(tmp_path, broadcast):
    """from_checkpoint in a new algorithm: the remote runners start from the restored statistics, and the next
    merge adds to them (it merged onto the new group's empty base: the restored statistics were dropped)."""
    from relayrl import Algorithm

    algo = config(broadcast_env_runner_states=broadcast).build_algo()
    try:
        algo.train()
        algo.train()
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        saved_count, saved_mean = stat(algo.env_runner)
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[CountingEnv])
    try:
        assert stat(restored.env_runner)[0] == saved_count
        assert all(c == saved_count and np.allclose(m, saved_mean) for c, m in remote_stats(restored))
        restored.train()
        count, _ = stat(restored.env_runner)
        assert count >= saved_count + 20  # (20 steps sampled, each pushed an observation)
    finally:
        restored.stop()
