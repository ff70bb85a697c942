"""A resumed offline run continues its pass over the data: N iterations, a checkpoint, M more in a restored
algorithm give the weights of one run of N + M iterations (the pass crossing files and epochs, shuffled or not);
a checkpoint taken on other files is refused with the fix; one without a reader position still restores."""
import json

import numpy as np
import pytest

from relayrl import BC, BCConfig
from relayrl.checkpoints import CheckpointError
from relayrl.offline.sample_batch_json import sample_batch_line

pq = pytest.importorskip("pyarrow.parquet")


def _split(rows_folder, folder, parts: int) -> str:
    """The recorded rows split into `parts` small parquet files (schema and tensor metadata kept)."""
    import glob

    table = pq.read_table(sorted(glob.glob(f"{rows_folder}/**/*.parquet", recursive=True)))
    folder.mkdir()
    size = -(-len(table) // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * size, size), str(folder / f"part-{i:02d}.parquet"))
    return str(folder)


@pytest.fixture(scope="module")
def small_files(cartpole_rows, tmp_path_factory):
    return _split(cartpole_rows, tmp_path_factory.mktemp("resume") / "rows", 5)


@pytest.fixture(scope="module")
def small_episode_files(cartpole_episodes, tmp_path_factory):
    return _split(cartpole_episodes, tmp_path_factory.mktemp("resume") / "episodes", 3)


def _config(data, batch=32, **offline):
    return (BCConfig().environment("CartPole-v1").offline_data(input_=data, **offline)
            .training(train_batch_size=batch).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}))


def _weights(algo):
    return {k: np.array(v) for k, v in algo.learner_group.get_weights()["default_policy"].items()}


def _train(algo, iterations):
    for _ in range(iterations):
        algo.train()


def _uninterrupted(config, total):
    algo = config.build_algo()
    try:
        _train(algo, total)
        return _weights(algo)
    finally:
        algo.stop()


def _resumed(config, first, then, path, how, check=None):
    algo = config.build_algo()
    try:
        _train(algo, first)
        if check is not None:
            check(algo)
        algo.save_to_path(path)
    finally:
        algo.stop()
    if how == "from_checkpoint":
        resumed = BC.from_checkpoint(path)
    else:  # restore() into a fresh algorithm that trained on first: its own reader position is replaced
        resumed = config.build_algo()
        _train(resumed, 2)
        resumed.restore(path)
    try:
        _train(resumed, then)
        return _weights(resumed)
    finally:
        resumed.stop()


def _same(a, b) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# ~600 rows in 5 files, 32 rows an iteration: 7 + 30 iterations cross files and two epochs.
@pytest.mark.parametrize("offline, how", [
    ({"shuffle_buffer_size": 64}, "from_checkpoint"),
    ({"shuffle_buffer_size": 64}, "restore"),
    ({}, "from_checkpoint"),  # 'auto': a 4096-row pool, larger than the data (rows of several passes)
    ({"shuffle_buffer_size": 0}, "restore"),  # no shuffling: files and rows in order
    ({"materialize_data": True}, "from_checkpoint"),
])
def test_a_resumed_run_trains_as_an_uninterrupted_one(small_files, tmp_path, offline, how):
    config = _config(small_files, **offline)
    whole = _uninterrupted(config, 37)
    assert _same(_resumed(config, 7, 30, tmp_path / "ckpt", how), whole)


def test_episode_rows_resume_with_the_carried_episodes(small_episode_files, tmp_path):
    config = _config(small_episode_files, shuffle_buffer_size=8, input_read_episodes=True, input_read_batch_size=2)
    whole = _uninterrupted(config, 25)

    def carries_episodes(algo):  # the checkpoint names episodes cut at the last batch's end
        assert any(origin[2] > 0 for origin in algo.offline_data.rows._episodes.carried)

    assert _same(_resumed(config, 6, 19, tmp_path / "ckpt", "from_checkpoint", carries_episodes), whole)


def test_sample_batch_json_resumes(small_files, tmp_path):
    table = pq.read_table(small_files)
    columns = {"obs": np.stack(table.column("obs").to_numpy(zero_copy_only=False)).astype(np.float32),
               "new_obs": np.stack(table.column("new_obs").to_numpy(zero_copy_only=False)).astype(np.float32),
               "actions": table.column("actions").to_numpy(), "rewards": table.column("rewards").to_numpy(),
               "dones": table.column("terminateds").to_numpy()}
    folder = tmp_path / "json"
    folder.mkdir()
    line_rows, per_file = 25, 6
    lines = [sample_batch_line({k: v[i:i + line_rows] for k, v in columns.items()})
             for i in range(0, len(table), line_rows)]
    for f in range(0, len(lines), per_file):
        (folder / f"part-{f:02d}.json").write_text("\n".join(lines[f:f + per_file]) + "\n")
    config = _config(str(folder), shuffle_buffer_size=48)
    whole = _uninterrupted(config, 30)
    assert _same(_resumed(config, 9, 21, tmp_path / "ckpt", "restore"), whole)


@pytest.mark.filterwarnings("ignore::UserWarning")  # Minari's reminders to fill in the dataset's metadata
def test_minari_resumes(tmp_path, monkeypatch):
    minari = pytest.importorskip("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    import gymnasium as gym
    from minari.data_collector import EpisodeBuffer

    rng = np.random.default_rng(0)
    buffers = []
    for length in (30, 50, 20, 40):
        buffers.append(EpisodeBuffer(observations=rng.normal(size=(length + 1, 4)).astype(np.float32),
                                     actions=rng.integers(0, 2, length), rewards=[1.0] * length,
                                     terminations=[False] * (length - 1) + [True], truncations=[False] * length))
    minari.create_dataset_from_buffers("relayrl/resume-test-v0", buffers, env=gym.make("CartPole-v1").spec,
                                       observation_space=gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
                                       action_space=gym.spaces.Discrete(2), algorithm_name="test")
    config = _config("minari://relayrl/resume-test-v0", batch=16, shuffle_buffer_size=24)
    whole = _uninterrupted(config, 20)
    assert _same(_resumed(config, 5, 15, tmp_path / "ckpt", "from_checkpoint"), whole)


def _checkpoint(config, path, iterations=3) -> str:
    algo = config.build_algo()
    try:
        _train(algo, iterations)
        return algo.save_to_path(path)
    finally:
        algo.stop()


def test_other_input_files_are_refused_with_the_fix(small_files, tmp_path):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(small_files, data)
    path = _checkpoint(_config(str(data), shuffle_buffer_size=64), tmp_path / "ckpt")
    (data / "part-04.parquet").unlink()  # another file list
    config = _config(str(data), shuffle_buffer_size=64)
    algo = config.build_algo()
    try:
        _train(algo, 1)
        before = _weights(algo)
        with pytest.raises(CheckpointError, match=r"offline_data.*read 5 input file.*reads 4.*input_restore_position=False"):
            algo.restore(path)
        assert _same(_weights(algo), before)  # nothing changed
    finally:
        algo.stop()
    with pytest.raises(CheckpointError, match="read 5 input file"):
        BC.from_checkpoint(path)
    # The documented fix: start the data pass over, restore everything else.
    resumed = BC.from_checkpoint(path, config_overrides={"input_restore_position": False})
    try:
        assert resumed.iteration == 3 and resumed.offline_data.reader.passes == 0
        _train(resumed, 1)
        resumed.save_to_path(tmp_path / "ckpt2")
    finally:
        resumed.stop()
    # The setting was for that restore: the resumed run's own checkpoint continues its pass by default.
    again = BC.from_checkpoint(tmp_path / "ckpt2")
    try:
        assert again.config.input_restore_position is True and again.iteration == 4
    finally:
        again.stop()
    # The other fix: only the weights and optimizer.
    algo = config.build_algo()
    try:
        algo.restore_from_path(path, component="learner_group")
        assert algo.iteration == 0 and _same(_weights(algo), _weights_at(path))
    finally:
        algo.stop()


def _weights_at(path):
    algo = BC.from_checkpoint(path, config_overrides={"input_restore_position": False})
    try:
        return _weights(algo)
    finally:
        algo.stop()


def test_a_changed_file_is_refused(small_files, tmp_path):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(small_files, data)
    path = _checkpoint(_config(str(data), shuffle_buffer_size=64), tmp_path / "ckpt")
    table = pq.read_table(str(data / "part-01.parquet"))
    pq.write_table(table.slice(0, len(table) - 5), str(data / "part-01.parquet"))  # same name, fewer rows
    with pytest.raises(CheckpointError, match=r"part-01\.parquet \(\d+ bytes, \d+ rows\) in the checkpoint"):
        BC.from_checkpoint(path)


def test_a_checkpoint_without_the_reader_position_restores(small_files, tmp_path):
    """Checkpoints written before the position was stored: everything else restores, the pass starts over."""
    config = _config(small_files, shuffle_buffer_size=64)
    path = _checkpoint(config, tmp_path / "ckpt")
    manifest_path = tmp_path / "ckpt" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert "offline_data" in manifest["components"]
    del manifest["components"]["offline_data"]  # the old layout: no offline_data folder
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("offline_data/")}
    manifest_path.write_text(json.dumps(manifest))
    shutil_rmtree(tmp_path / "ckpt" / "offline_data")
    restored = BC.from_checkpoint(path)
    fresh = config.build_algo()
    try:
        assert restored.iteration == 3
        # the pass starts over: the restored reader reads what a new one reads
        assert np.array_equal(restored.offline_data.reader.next_batch(32).row_in_file,
                              fresh.offline_data.reader.next_batch(32).row_in_file)
        _train(restored, 1)
    finally:
        restored.stop()
        fresh.stop()


def shutil_rmtree(path):
    import shutil

    shutil.rmtree(path)


def test_the_position_is_small(small_files, tmp_path):
    _checkpoint(_config(small_files), tmp_path / "ckpt")
    size = sum(p.stat().st_size for p in (tmp_path / "ckpt" / "offline_data").rglob("*") if p.is_file())
    assert size < 4096 * 12 + 4096  # the 'auto' pool's 4096 origins (12 bytes each) and a little JSON


# -- the reader itself ---------------------------------------------------------------------------------
def _stream(folder, shuffle_rows, seed):
    from relayrl.offline.files import input_files
    from relayrl.offline.reader import ParquetFiles, RowStream

    return RowStream(ParquetFiles(*input_files(folder)), shuffle_rows=shuffle_rows, seed=seed)


def _origins(batch):
    return np.stack([batch.file_index, batch.row_in_file])


def test_a_stream_continues_from_its_state_whatever_its_seed(small_files):
    from relayrl.checkpoints.state_checks import Where

    first = _stream(small_files, 50, seed=1)
    for _ in range(23):  # mid-file, mid-pass
        first.next_batch(7)
    state = first.get_state()
    second = _stream(small_files, 50, seed=99)
    second.check_state(state, Where.in_memory("RowStream"))
    second.set_state(state)
    for _ in range(200):  # on through several passes
        a, b = first.next_batch(7), second.next_batch(7)
        assert np.array_equal(_origins(a), _origins(b))
        assert all(np.array_equal(a.columns[k], b.columns[k]) for k in a.columns)


def test_other_record_batch_sizes_continue_at_the_same_row(small_files, monkeypatch):
    """A file read back in other record batches (e.g. another pyarrow) goes on at the stored row, not the stored
    record batch (unshuffled: the rows that follow are the same)."""
    from relayrl.offline import reader

    monkeypatch.setattr(reader, "_READ_ROWS", 16)
    first = _stream(small_files, 0, seed=0)
    first.next_batch(37)
    state = first.get_state()
    expected = np.concatenate([_origins(first.next_batch(10)) for _ in range(70)], axis=1)
    monkeypatch.setattr(reader, "_READ_ROWS", 50)
    second = _stream(small_files, 0, seed=0)
    second.set_state(state)
    assert np.array_equal(np.concatenate([_origins(second.next_batch(10)) for _ in range(70)], axis=1), expected)


@pytest.mark.parametrize("key, value, match", [
    ("pool_file_index", np.array([0, 9], np.int32), "pool_file_index`: indices outside the 5 input file"),
    ("order", [0, 0, 1, 2, 3], "order`: expected None or an order of the 5"),
    ("shuffle_rows", 8, "shuffle_rows`: the checkpoint's reader shuffled among 8 rows, this one among 50"),
    ("rng", {"bit_generator": "Nope"}, "rng`: not a valid numpy generator state"),
])
def test_a_bad_position_is_refused_naming_the_key(small_files, key, value, match):
    from relayrl.checkpoints.state_checks import Where

    stream = _stream(small_files, 50, seed=1)
    stream.next_batch(7)
    state = {**stream.get_state(), key: value}
    if key == "pool_file_index":
        state["pool_row_in_file"] = np.array([0, 1], np.int64)
    before = _origins(stream._pool)
    with pytest.raises(CheckpointError, match=match):
        stream.check_state(state, Where.in_memory("RowStream"))
    assert np.array_equal(_origins(stream._pool), before)
