"""Remote offline evaluation runners that fail (RLlib's fault-tolerance options for them): a runner whose actor died
is restarted and evaluates its share again; with restarts off the evaluation fails naming the options, or goes on
without the runner with ignore_offline_eval_runner_failures; an error the evaluation itself raises (bad data) is
not retried."""
import logging

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from relayrl import BCConfig

pytestmark = pytest.mark.slow
ITERS, BATCH = 2, 32


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("held_out")
    for name, seed in (("a", 1), ("b", 2)):
        rng = np.random.default_rng(seed)
        obs = rng.normal(size=(128, 4)).astype(np.float32)
        pq.write_table(pa.table({"obs": list(obs), "new_obs": list(obs), "actions": (obs[:, 2] > 0).astype(np.int64),
                                 "rewards": np.ones(128), "terminateds": np.zeros(128, bool),
                                 "truncateds": np.zeros(128, bool)}), folder / f"{name}.parquet")
    return str(folder)


def _algo(data: str, **evaluation):
    return (BCConfig().environment("CartPole-v1").offline_data(input_=[data])
            .training(train_batch_size_per_learner=32).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"})
            .evaluation(offline_evaluation_interval=1, num_offline_eval_runners=2,
                        offline_eval_batch_size_per_runner=BATCH, dataset_num_iters_per_offline_eval_runner=ITERS,
                        **evaluation)).build_algo()


def _iters(result) -> int:
    return result["offline_eval_runners"]["__all_modules__"]["dataset_num_iters_evaluated"]


def test_a_runner_whose_actor_died_is_restarted_and_evaluates(local_ray, two_files):
    algo = _algo(two_files)
    try:
        runners = algo.offline_eval_runner
        assert _iters(algo.evaluate_offline()) == 2 * ITERS
        local_ray.kill(runners.actors[0])
        result = algo.evaluate_offline()
        assert _iters(result) == 2 * ITERS and runners.num_restarts == 1
        assert np.isfinite(result["offline_eval_runners"]["default_policy"]["total_eval_loss"])
        assert _iters(algo.evaluate_offline()) == 2 * ITERS and runners.num_restarts == 1  # it stays healthy
    finally:
        algo.stop()


def test_without_restarts_the_evaluation_fails_naming_the_options(local_ray, two_files):
    from relayrl.distributed.offline_eval_actors import OfflineEvalRunnerFailedError

    algo = _algo(two_files, restart_failed_offline_eval_runners=False)
    try:
        local_ray.kill(algo.offline_eval_runner.actors[1])
        with pytest.raises(OfflineEvalRunnerFailedError, match="(?s)runner 1 failed.*restart_failed_offline_eval_runners="
                                                               "True.*ignore_offline_eval_runner_failures=True"):
            algo.evaluate_offline()
    finally:
        algo.stop()


def test_restarts_used_up_fail_the_evaluation(local_ray, two_files):
    from relayrl.distributed.offline_eval_actors import OfflineEvalRunnerFailedError

    algo = _algo(two_files, max_num_offline_eval_runner_restarts=0)
    try:
        local_ray.kill(algo.offline_eval_runner.actors[0])
        with pytest.raises(OfflineEvalRunnerFailedError, match="max_num_offline_eval_runner_restarts=0"):
            algo.evaluate_offline()
    finally:
        algo.stop()


def test_ignoring_failures_reports_the_other_runners(local_ray, two_files, caplog):
    algo = _algo(two_files, restart_failed_offline_eval_runners=False, ignore_offline_eval_runner_failures=True)
    try:
        local_ray.kill(algo.offline_eval_runner.actors[0])
        with caplog.at_level(logging.WARNING, logger="relayrl"):
            result = algo.evaluate_offline()
        assert _iters(result) == ITERS and "left out" in caplog.text
        assert _iters(algo.evaluate_offline()) == ITERS  # the other runner goes on alone
    finally:
        algo.stop()


def test_an_error_of_the_evaluation_itself_is_not_retried(local_ray, two_files):
    from relayrl.offline.reader import OfflineDataError

    # "is" needs the behaviour policy's action_logp, which these rows lack: every restart would fail the same way.
    algo = _algo(two_files, offline_evaluation_type="is")
    try:
        with pytest.raises(OfflineDataError, match="no column 'action_logp'"):
            algo.evaluate_offline()
        assert algo.offline_eval_runner.num_restarts == 0
    finally:
        algo.stop()
