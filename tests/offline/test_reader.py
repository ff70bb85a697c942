"""The embedded reader: every row once per pass (shuffled or in order), memory bounded by the shuffle pool, and
bad data reported with its file, row and column (missing column, wrong shape or dtype, values outside the spaces,
an empty dataset, a truncated file, a pickle that would run code)."""
import base64
import os
import pickle

import gymnasium as gym
import lz4.frame
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from relayrl import BCConfig, IQLConfig
from relayrl.core.columns import Columns
from relayrl.offline.arrow_columns import numpy_to_column
from relayrl.offline.files import input_files
from relayrl.offline.offline_data import make_reader
from relayrl.offline.reader import OfflineDataError, ParquetFiles, RowStream

OBS = gym.spaces.Box(-10.0, 10.0, (3,), np.float32)


def write_rows(path, n, *, start=0, drop=(), **overrides):
    """A parquet file of n transition rows (obs[i] = [i, i, i] from `start`), as the writer lays them out."""
    ids = np.arange(start, start + n)
    columns = {
        Columns.EPS_ID: np.array([f"e{i // 10}" for i in ids], dtype=object),
        Columns.OBS: np.repeat(ids[:, None], 3, axis=1).astype(np.float32),
        Columns.ACTIONS: ids % 2,
        Columns.REWARDS: np.ones(n),
        Columns.NEXT_OBS: np.repeat(ids[:, None] + 1, 3, axis=1).astype(np.float32),
        Columns.TERMINATEDS: ids % 10 == 9,
        Columns.TRUNCATEDS: np.zeros(n, bool),
    }
    columns.update(overrides)
    fields, arrays = [], []
    for name, values in columns.items():
        if name in drop:
            continue
        array, metadata = numpy_to_column(values)
        arrays.append(array)
        fields.append(pa.field(name, array.type, metadata=metadata))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path)
    return path


def _stream(folder, shuffle_rows=0, seed=0, **kwargs):
    fs, files = input_files(str(folder))
    return RowStream(ParquetFiles(fs, files, **kwargs), shuffle_rows=shuffle_rows, seed=seed)


def _config(folder, config_class=BCConfig, **offline):
    return (config_class().environment(observation_space=OBS, action_space=gym.spaces.Discrete(2))
            .offline_data(input_=str(folder), **offline).training(train_batch_size=16)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))


def _write_parts(folder, parts=4, rows=50):
    for k in range(parts):
        write_rows(folder / f"part{k}.parquet", rows, start=rows * k)


def test_without_shuffling_each_pass_reads_every_row_once_in_file_order(tmp_path):
    _write_parts(tmp_path / "d")
    stream = _stream(tmp_path / "d")
    assert stream.num_rows == 200
    for _ in range(2):  # pass after pass
        rows = np.concatenate([stream.next_batch(25).columns[Columns.OBS][:, 0] for _ in range(8)])
        np.testing.assert_array_equal(rows, np.arange(200))


def test_shuffled_rows_come_evenly_and_out_of_order(tmp_path):
    _write_parts(tmp_path / "d")
    stream = _stream(tmp_path / "d", shuffle_rows=64, seed=3)
    rows = np.concatenate([stream.next_batch(25).columns[Columns.OBS][:, 0] for _ in range(80)]).astype(int)
    assert not (rows[:200] == np.arange(200)).all()
    assert len(set(rows[:200])) > 150  # mostly new rows within a pass (the pool carries some over)
    counts = np.bincount(rows, minlength=200)
    assert counts.min() >= 6 and counts.max() <= 14  # 10 passes: every row about 10 times


def test_shuffled_rows_keep_their_columns_and_origin_together(tmp_path):
    _write_parts(tmp_path / "d")
    batch = _stream(tmp_path / "d", shuffle_rows=64, seed=1).next_batch(120)
    ids = batch.columns[Columns.OBS][:, 0].astype(int)
    assert not (np.diff(ids) == 1).all()
    np.testing.assert_array_equal(batch.columns[Columns.OBS], np.repeat(ids[:, None], 3, axis=1))
    np.testing.assert_array_equal(batch.columns[Columns.NEXT_OBS], np.repeat(ids[:, None] + 1, 3, axis=1))
    np.testing.assert_array_equal(batch.columns[Columns.ACTIONS], ids % 2)
    assert list(batch.columns[Columns.EPS_ID]) == [f"e{i // 10}" for i in ids]
    np.testing.assert_array_equal(batch.file_index * 50 + batch.row_in_file, ids)


def test_memory_holds_the_pool_not_the_dataset(tmp_path):
    for k in range(20):
        write_rows(tmp_path / f"d/part{k:02d}.parquet", 100, start=100 * k)
    stream = _stream(tmp_path / "d", shuffle_rows=150)
    for _ in range(40):
        stream.next_batch(50)
        assert len(stream._pool) <= 150 + 100  # the pool: at most one file's rows above its size


def test_rows_name_their_file_and_row(tmp_path):
    write_rows(tmp_path / "d/a.parquet", 5)
    path = write_rows(tmp_path / "d/b.parquet", 5, start=5)
    batch = _stream(tmp_path / "d").next_batch(10)
    assert batch.where(7) == f"file {path}, row 2"


def test_hidden_and_partial_files_are_skipped(tmp_path):
    write_rows(tmp_path / "d/run-000000-00001/a.parquet", 5)
    write_rows(tmp_path / "d/run-000000-00002/.b.parquet.partial", 5)
    write_rows(tmp_path / "d/_tmp/c.parquet", 5)
    assert _stream(tmp_path / "d").num_rows == 5


def test_inputs_may_be_files_globs_and_local_uris(tmp_path):
    a = write_rows(tmp_path / "d/x/a.parquet", 3)
    write_rows(tmp_path / "d/y/b.parquet", 4)
    assert input_files([f"local://{a}", str(tmp_path / "d/y/*.parquet")])[1] == [str(a), str(tmp_path / "d/y/b.parquet")]
    with pytest.raises(ValueError, match="no such file or folder"):
        input_files(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="matches no parquet or JSON file"):
        input_files(str(tmp_path / "d/*.csv"))


def test_columns_renamed_by_input_read_schema(tmp_path):
    obs = np.zeros((4, 3), np.float32)
    write_rows(tmp_path / "d/a.parquet", 4, drop=(Columns.OBS,), o_t=obs)
    config = _config(tmp_path / "d", input_read_schema={Columns.OBS: "o_t"})
    batch = make_reader(config).next_batch(4)
    np.testing.assert_array_equal(batch.columns[Columns.OBS], obs)


# -- bad data ---------------------------------------------------------------------------------------

# Offline algorithms share the reader and its checks: BC's and IQL's (Q-learning from next observations) runs.
BC_AND_IQL = pytest.mark.parametrize("config_class", [BCConfig, IQLConfig])


def _train_error(tmp_path, config_class=BCConfig, **offline) -> str:
    with pytest.raises(OfflineDataError) as info:
        algo = _config(tmp_path / "d", config_class, **offline).build_algo()
        try:
            algo.train()
        finally:
            algo.stop()
    return str(info.value)


@BC_AND_IQL
def test_a_missing_column_names_the_file_and_the_fix(tmp_path, config_class):
    path = write_rows(tmp_path / "d/a.parquet", 4, drop=(Columns.NEXT_OBS,))
    message = _train_error(tmp_path, config_class)
    assert str(path) in message and "'new_obs'" in message and "input_read_schema" in message


def test_episode_rows_read_as_transitions_say_so(tmp_path):
    os.makedirs(tmp_path / "d")
    pq.write_table(pa.table({"item": [b"x"]}), tmp_path / "d/a.parquet")
    assert "input_read_episodes=True" in _train_error(tmp_path)


def test_multi_agent_rows_are_refused_when_the_algorithm_is_built(tmp_path):
    write_rows(tmp_path / "d/a.parquet", 20, **{Columns.AGENT_ID: np.full(20, None, dtype=object)})  # single-agent
    path = write_rows(tmp_path / "d/b.parquet", 20, **{Columns.AGENT_ID: np.arange(20) % 2,
                                                        Columns.MODULE_ID: np.array(["p0", "p1"] * 10, dtype=object)})
    with pytest.raises(OfflineDataError) as info:
        _config(tmp_path / "d").build_algo()
    message = str(info.value)
    assert f"file {path} holds multi-agent rows" in message and "not supported yet" in message
    assert "module_id" in message


def test_multi_agent_episode_rows_are_refused_naming_file_and_row(tmp_path):
    from relayrl.episodes.single_agent_episode import SingleAgentEpisode
    from relayrl.offline.episode_rows import encode_episode

    obs = np.zeros((4, 3), np.float32)
    items = [encode_episode(SingleAgentEpisode(observations=list(obs), actions=[0, 1, 0], rewards=[1.0] * 3,
                                               agent_id=agent_id, module_id=module_id))
             for agent_id, module_id in ((None, None), ("a1", "p1"))]
    os.makedirs(tmp_path / "d")
    pq.write_table(pa.table({"item": items}), tmp_path / "d/a.parquet")
    message = _train_error(tmp_path, input_read_episodes=True, shuffle_buffer_size=0)
    assert f"file {tmp_path / 'd/a.parquet'}, row 1" in message and "agent 'a1'" in message
    assert "not supported yet" in message


@pytest.mark.parametrize("bad, named", [
    ({"obs": np.zeros((4, 2), np.float32)}, "observations have shape [2], but the space"),
    ({"actions": [0, 5, 1]}, "actions [0, 5, 1]... are not all in the space Discrete(2)"),
    ({"rewards": [1.0, np.nan, 1.0]}, "rewards hold nan"),
])
def test_episode_rows_that_do_not_fit_the_spaces_name_file_and_row(tmp_path, bad, named):
    """Checked as transition rows are (before: numpy's concatenate error in the Learner pipeline, or nothing)."""
    from relayrl.episodes.single_agent_episode import SingleAgentEpisode
    from relayrl.offline.episode_rows import encode_episode

    def episode(obs=np.zeros((4, 3), np.float32), actions=(0, 1, 0), rewards=(1.0, 1.0, 1.0)):
        return encode_episode(SingleAgentEpisode(observations=list(obs), actions=list(actions), rewards=list(rewards),
                                                 truncated=True, len_lookback_buffer=0))

    os.makedirs(tmp_path / "d")
    pq.write_table(pa.table({"item": [episode(), episode(**bad)]}), tmp_path / "d/a.parquet")
    message = _train_error(tmp_path, input_read_episodes=True, shuffle_buffer_size=0)
    assert f"file {tmp_path / 'd/a.parquet'}, row 1, column 'item'" in message and named in message


def test_episode_rows_without_steps_are_refused_not_read_forever(tmp_path):
    """Episodes whose steps are all in the lookback buffer (SingleAgentEpisode's default) hold no steps: a pass of
    them ends the read with the problem named (before, train() read the files forever)."""
    from relayrl.episodes.single_agent_episode import SingleAgentEpisode
    from relayrl.offline.episode_rows import encode_episode

    empty = encode_episode(SingleAgentEpisode(observations=list(np.zeros((4, 3), np.float32)), actions=[0, 1, 0],
                                              rewards=[1.0] * 3))
    os.makedirs(tmp_path / "d")
    pq.write_table(pa.table({"item": [empty] * 3}), tmp_path / "d/a.parquet")
    message = _train_error(tmp_path, input_read_episodes=True)
    assert "episode rows read one after the other hold no steps" in message and "has 3 rows" in message


def test_multi_agent_configs_of_offline_algorithms_train_one_module_or_are_refused():
    two = _config("/data").multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **kw: "p0")
    with pytest.raises(ValueError, match=r"BC trains one module .* trains 2 \(\['p0', 'p1'\]\): give it one"):
        two.validate()
    two.multi_agent(policies_to_train=["p1"]).validate()  # one trained module: the rows train p1
    iql = _config("/data", IQLConfig).multi_agent(policies={"p0"}, policy_mapping_fn=lambda aid, *a, **kw: "p0")
    with pytest.raises(ValueError, match="multi-agent offline input .* is not supported yet"):
        iql.validate()


def test_observations_of_the_wrong_shape_name_file_row_and_column(tmp_path):
    path = write_rows(tmp_path / "d/a.parquet", 20, **{Columns.OBS: np.zeros((20, 4), np.float32)})
    message = _train_error(tmp_path, shuffle_buffer_size=0)
    assert f"file {path}, row 0, column 'obs'" in message and "shape [4]" in message and "[3]" in message


@pytest.mark.parametrize("bad_name", ["a.parquet", "c.parquet"])
@pytest.mark.parametrize("shuffle", ["auto", 0])
def test_a_file_whose_rows_differ_in_shape_from_the_others_is_named(tmp_path, shuffle, bad_name):
    """Rows of two files meet in one batch (the shuffle pool): a column of another row shape was cut or zero-padded
    into the pool silently (shuffled), or failed numpy's concatenation without naming a file (in order)."""
    good = write_rows(tmp_path / "d/b.parquet", 20)
    bad = write_rows(tmp_path / "d" / bad_name, 20, **{Columns.OBS: np.zeros((20, 2), np.float32)})
    message = _train_error(tmp_path, shuffle_buffer_size=shuffle, dataset_num_iters_per_learner=3)
    # the file that does not fit the space is named, whichever is read first
    assert message.startswith(f"offline data: file {bad}, row 0, column 'obs': "), message
    assert "shape [2], but the" in message and "space" in message and "shape [3]" in message
    assert str(good) not in message


def test_files_with_different_columns_are_named_with_the_fix(tmp_path):
    write_rows(tmp_path / "d/a.parquet", 20, action_logp=np.zeros(20, np.float32))  # e.g. a PPO recording
    bad = write_rows(tmp_path / "d/b.parquet", 20)  # and one without the extra column (KeyError, before)
    message = _train_error(tmp_path)
    assert str(bad) in message and "no column 'action_logp'" in message and "'columns'" in message
    columns = [Columns.EPS_ID, Columns.OBS, Columns.ACTIONS, Columns.REWARDS, Columns.NEXT_OBS, Columns.TERMINATEDS,
               Columns.TRUNCATEDS]
    algo = _config(tmp_path / "d", input_read_method_kwargs={"columns": columns}).build_algo()  # the fix named
    try:
        assert algo.train()["num_env_steps_trained_lifetime"] == 16
    finally:
        algo.stop()


def test_an_action_outside_the_space_names_its_row(tmp_path):
    actions = np.zeros(20, np.int64)
    actions[13] = 5
    path = write_rows(tmp_path / "d/a.parquet", 20, **{Columns.ACTIONS: actions})
    message = _train_error(tmp_path, shuffle_buffer_size=0)
    assert f"file {path}, row 13, column 'actions'" in message and "action 5" in message


@BC_AND_IQL
def test_a_nan_reward_and_a_string_observation_are_named(tmp_path, config_class):
    rewards = np.ones(20)
    rewards[4] = np.nan
    path = write_rows(tmp_path / "d/a.parquet", 20, **{Columns.REWARDS: rewards})
    assert f"file {path}, row 4, column 'rewards'" in _train_error(tmp_path, config_class, shuffle_buffer_size=0)
    write_rows(tmp_path / "d/a.parquet", 20, **{Columns.ACTIONS: np.array(["left"] * 20, dtype=object)})
    message = _train_error(tmp_path, config_class)
    assert "column 'actions'" in message and "not numbers" in message


def test_an_empty_dataset_is_refused(tmp_path):
    write_rows(tmp_path / "d/a.parquet", 0)
    assert "empty" in _train_error(tmp_path)


def test_a_truncated_file_is_named(tmp_path):
    write_rows(tmp_path / "d/a.parquet", 20)
    path = write_rows(tmp_path / "d/b.parquet", 20)
    data = open(path, "rb").read()
    open(path, "wb").write(data[:len(data) // 2])  # a writer killed mid-file, outside relayrl's hidden names
    message = _train_error(tmp_path)
    assert f"file {path} is not a readable parquet file" in message and "truncated" in message


def test_a_compressed_cell_that_would_run_code_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return os.system, ("echo owned",)

    cells = np.array([base64.b64encode(lz4.frame.compress(pickle.dumps(Evil()))).decode()] * 20, dtype=object)
    path = write_rows(tmp_path / "d/a.parquet", 20, **{Columns.OBS: cells})
    message = _train_error(tmp_path, shuffle_buffer_size=0)
    assert f"file {path}, row 0, column 'obs'" in message and "refused" in message


@BC_AND_IQL
def test_nothing_half_trained_is_kept_from_a_failing_iteration(tmp_path, config_class):
    """A bad row stops train() before the Learner's update: the weights stay as they were."""
    actions = np.zeros(40, np.int64)
    actions[30:] = 7
    write_rows(tmp_path / "d/a.parquet", 40, **{Columns.ACTIONS: actions})
    algo = _config(tmp_path / "d", config_class, shuffle_buffer_size=0).build_algo()
    try:
        algo.train()  # rows 0-15 are fine
        before = algo.learner_group.get_weights()
        algo.train()  # rows 16-31 hold a bad action
        pytest.fail("the bad action was not caught")
    except OfflineDataError as error:
        assert "row 30" in str(error)
        after = algo.learner_group.get_weights()
        for key, value in before["default_policy"].items():
            np.testing.assert_array_equal(value, after["default_policy"][key])
    finally:
        algo.stop()
