"""Files RLlib 2.60 wrote (tests/data/rllib_offline/: transition rows, LZ4-compressed rows, episode rows) read with
relayrl's reader: the values RLlib recorded come back, and BC and MARWIL train on them."""
import pathlib

import numpy as np
import pyarrow.parquet as pq
import pytest

from relayrl import BCConfig, MARWILConfig
from relayrl.core.columns import Columns
from relayrl.offline.offline_data import make_reader

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "rllib_offline"


def _config(kind, config_class=BCConfig):
    return (config_class().environment("CartPole-v1")
            .offline_data(input_=str(DATA / kind), input_read_episodes=kind == "episodes", shuffle_buffer_size=0)
            .training(train_batch_size=8).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}))


def test_rllibs_transition_rows_read_as_recorded():
    files = sorted((DATA / "transitions").rglob("*.parquet"))
    expected = [pq.read_table(f).to_pylist()[0] for f in files]
    rows = make_reader(_config("transitions")).next_batch(len(files)).columns
    np.testing.assert_allclose(rows[Columns.OBS], [r["obs"] for r in expected])
    np.testing.assert_allclose(rows[Columns.NEXT_OBS], [r["new_obs"] for r in expected])
    assert list(rows[Columns.ACTIONS]) == [r["actions"] for r in expected]
    assert list(rows[Columns.EPS_ID]) == [r["eps_id"] for r in expected]


def test_rllibs_compressed_rows_decompress_to_arrays():
    algo = _config("compressed").build_algo()
    try:
        rows = algo.offline_data.reader.next_batch(2)
        assert rows.columns[Columns.OBS].dtype == object  # base64 text of LZ4 frames of pickles, as RLlib wrote
        algo.offline_data.rows.transitions(rows)
        assert rows.columns[Columns.OBS].shape == (2, 4) and rows.columns[Columns.OBS].dtype == np.float32
    finally:
        algo.stop()


@pytest.mark.parametrize("kind", ["transitions", "compressed", "episodes"])
@pytest.mark.parametrize("config_class", [BCConfig, MARWILConfig])
def test_bc_and_marwil_train_on_rllibs_files(kind, config_class):
    algo = _config(kind, config_class).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert result["num_env_steps_trained_lifetime"] == 8
    assert np.isfinite(result["learners"]["default_policy"]["policy_loss"])


@pytest.mark.slow  # a process that imports ray.data (~4 s)
def test_tensor_columns_read_the_same_where_ray_data_is_loaded(tmp_path):
    """With ray.data imported, pyarrow reads Ray's tensor columns as Ray's extension type: same arrays, same shapes."""
    import subprocess
    import sys
    import textwrap

    import pyarrow as pa

    from relayrl.offline.arrow_columns import numpy_to_column

    images = np.arange(2 * 3 * 4 * 2, dtype=np.uint8).reshape(2, 3, 4, 2)
    column, metadata = numpy_to_column(images)
    pq.write_table(pa.Table.from_arrays([column], schema=pa.schema([pa.field("obs", column.type, metadata=metadata)])),
                   tmp_path / "images.parquet")
    script = textwrap.dedent(f"""
        import ray.data  # registers Ray's tensor type with pyarrow
        import numpy as np
        from relayrl.offline.files import input_files
        from relayrl.offline.reader import ParquetFiles, RowStream
        fs, files = input_files({str(tmp_path)!r})
        obs = RowStream(ParquetFiles(fs, files)).next_batch(2).columns["obs"]
        print(obs.shape, obs.dtype, int(obs.sum()))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["(2,", "3,", "4,", "2)", "uint8", str(int(images.sum()))], out.stderr[-2000:]
