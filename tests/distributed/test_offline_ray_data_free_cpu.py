"""Ray Data's read tasks need a CPU the run's actors leave free: 2 Learner actors on a 2-CPU Ray cluster used to
wait forever in the first train(); now the build says why and how to fix it, and the fix it names works."""
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from relayrl import BCConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
# (Ray: this folder's conftest.py starts it with 2 CPUs.)


def _config(tmp_path):
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(256, 4)).astype(np.float32)
    pq.write_table(pa.table({"obs": list(obs), "new_obs": list(obs), "actions": (obs[:, 2] > 0).astype(np.int64),
                             "rewards": np.ones(256), "terminateds": np.zeros(256, bool),
                             "truncateds": np.zeros(256, bool)}), tmp_path / "rows.parquet")
    return (BCConfig().environment("CartPole-v1").offline_data(input_=[str(tmp_path)], dataset_num_iters_per_learner=2)
            .training(train_batch_size_per_learner=32).learners(num_learners=2)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_learners_that_take_every_cpu_are_refused_with_the_fix(tmp_path, ray_cluster):
    with pytest.raises(ValueError, match="leave 0 of this Ray cluster's 2 CPUs free.*input_reader='embedded'"):
        _config(tmp_path).build_algo()
    deadline = time.time() + 30  # the Learner actors are released (Ray frees their CPUs shortly after)
    while ray_cluster.available_resources().get("CPU") != 2 and time.time() < deadline:
        time.sleep(0.2)
    assert ray_cluster.available_resources().get("CPU") == 2
    algo = _config(tmp_path).offline_data(input_reader="embedded").build_algo()
    try:
        assert algo.train()["num_env_steps_trained_lifetime"] == 2 * 2 * 32  # 2 updates of 32 rows per Learner
    finally:
        algo.stop()
