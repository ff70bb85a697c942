"""Parquet whose observations are a list column (`list<float>`, what `pa.table({"obs": list(rows)})` writes) reads
the same through Ray Data as embedded: Ray Data hands such a column as an object array of per-row arrays, which
the rows are stacked from (relayrl/distributed/offline_ray_data.py)."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import BCConfig
from relayrl.distributed.offline_ray_data import _row_batch
from relayrl.offline.reader import OfflineDataError
from relayrl.offline.row_checks import conform_observations


def test_a_list_column_from_ray_data_becomes_one_array_and_ragged_rows_stay_for_the_checks():
    rows = np.empty(3, dtype=object)
    rows[:] = [np.full(4, i, np.float32) for i in range(3)]
    batch = _row_batch({"obs": rows, "actions": np.arange(3)})
    assert batch.columns["obs"].dtype == np.float32 and batch.columns["obs"].shape == (3, 4)
    ragged = np.empty(2, dtype=object)
    ragged[:] = [np.zeros(4, np.float32), np.zeros(3, np.float32)]
    assert _row_batch({"obs": ragged}).columns["obs"].dtype == object  # the row checks name the shape


def test_ragged_rows_from_two_files_name_the_file_whose_shape_is_not_the_spaces():
    """Ray Data hands a batch from a file of [3]-rows and one of [4]-rows as per-row arrays: the check names the
    [3] file and both shapes (before: 'observations of dtype object ... If they are RLlib-compressed')."""
    ragged = np.empty(3, dtype=object)
    ragged[:] = [np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(3, np.float32)]
    batch = _row_batch({"obs": ragged, "path": np.array(["good.parquet", "good.parquet", "bad.parquet"], object)})
    with pytest.raises(OfflineDataError) as info:
        conform_observations(batch, "obs", gym.spaces.Box(-1, 1, (4,), np.float32))
    assert "file bad.parquet, column 'obs'" in str(info.value) and "shape [3]" in str(info.value)
    assert "shape [4]" in str(info.value)
    fitting = np.empty(2, dtype=object)
    fitting[:] = [np.zeros(4, np.float64), np.ones(4, np.float64)]
    batch = _row_batch({"obs": fitting})
    batch.columns["obs"] = fitting  # (cells of the space's shape left as cells are stacked and cast)
    conform_observations(batch, "obs", gym.spaces.Box(-1, 1, (4,), np.float32))
    assert batch.columns["obs"].dtype == np.float32 and batch.columns["obs"].shape == (2, 4)


@pytest.mark.slow
def test_bc_reads_list_observations_through_ray_data(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray

    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, 4)).astype(np.float32)
    pq.write_table(pa.table({"obs": list(obs), "new_obs": list(obs), "actions": rng.integers(0, 2, 64),
                             "rewards": np.ones(64), "terminateds": np.zeros(64, bool),
                             "truncateds": np.zeros(64, bool)}), tmp_path / "rows.parquet")
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    try:
        for reader in ("embedded", "ray_data"):
            algo = (BCConfig().environment(observation_space=gym.spaces.Box(-10, 10, (4,), np.float32),
                                           action_space=gym.spaces.Discrete(2))
                    .offline_data(input_=str(tmp_path), input_reader=reader).training(train_batch_size=16)
                    .rl_module(model_config={"fcnet_hiddens": [8]})
                    .debugging(seed=0, logger_config={"type": "none"})).build_algo()
            try:
                result = algo.train()
                assert result["num_env_steps_trained_lifetime"] > 0, reader
            finally:
                algo.stop()
    finally:
        ray.shutdown()
