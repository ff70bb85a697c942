"""Parquet files storing a column as Ray Data's tensor type in some and as a plain list in others: Ray Data fails
inside its block merge with a ValueError naming no file; relayrl names the column, the files of each kind and the
fix (relayrl/offline/mixed_columns.py, relayrl/distributed/offline_ray_data.py)."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import BCConfig
from relayrl.offline.arrow_columns import numpy_to_column
from relayrl.offline.mixed_columns import mixed_columns
from relayrl.offline.reader import OfflineDataError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pafs = pytest.importorskip("pyarrow.fs")


def _write(path, n, *, tensor: bool, seed: int):
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(n, 4)).astype(np.float32)
    columns, fields = {}, []
    for name, values in {"obs": obs, "new_obs": obs, "actions": (obs[:, 2] > 0).astype(np.int64),
                         "rewards": np.ones(n), "terminateds": np.zeros(n, bool),
                         "truncateds": np.zeros(n, bool)}.items():
        array, metadata = numpy_to_column(values) if tensor else (pa.array(list(values)), None)
        columns[name] = array
        fields.append(pa.field(name, array.type, metadata=metadata))
    pq.write_table(pa.Table.from_arrays(list(columns.values()), schema=pa.schema(fields)), str(path))


def _files(tmp_path):
    for i in range(3):
        _write(tmp_path / f"tensor-{i}.parquet", 64, tensor=True, seed=i)
    _write(tmp_path / "plain.parquet", 64, tensor=False, seed=9)
    return sorted(str(p) for p in tmp_path.glob("*.parquet"))


def test_mixed_columns_names_each_column_and_the_files_of_each_kind(tmp_path):
    text = mixed_columns(pafs.LocalFileSystem(), _files(tmp_path))
    assert "column 'obs': " in text and "column 'new_obs': " in text and "'actions'" not in text
    assert "Ray Data tensor column (row shape [4])" in text and "(and 1 more)" in text
    assert "plain list<element: float> column in " + str(tmp_path / "plain.parquet") in text
    assert mixed_columns(pafs.LocalFileSystem(), [p for p in _files(tmp_path) if "tensor" in p]) == ""


@pytest.mark.slow
def test_ray_data_reader_names_the_plain_file_and_the_fix(tmp_path):
    import ray

    _files(tmp_path)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        config = (BCConfig().environment(observation_space=gym.spaces.Box(-10, 10, (4,), np.float32),
                                         action_space=gym.spaces.Discrete(2))
                  .offline_data(input_=str(tmp_path), input_reader="ray_data").training(train_batch_size=96)
                  .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))
        algo = config.build_algo()
        try:
            with pytest.raises(OfflineDataError, match=r"Ray Data could not combine.*column 'obs'.*plain\.parquet.*"
                                                       r"input_reader='embedded'"):
                for _ in range(4):
                    algo.train()
        finally:
            algo.stop()
        algo = config.offline_data(input_reader="embedded").build_algo()  # the fix named
        try:
            assert algo.train()["num_env_steps_trained_lifetime"] > 0
        finally:
            algo.stop()
    finally:
        ray.shutdown()
