"""RLlib's old-stack SampleBatch JSON lines: read into the same transition rows as parquet (compressed and plain
columns, `dones` as `terminateds`, a one-policy MultiAgentBatch), trained on by BC, and bad lines reported with
their file, line and column."""
import json

import gymnasium as gym
import numpy as np
import pytest

from relayrl import BCConfig
from relayrl.offline.compression import pack
from relayrl.offline.files import input_files
from relayrl.offline.offline_data import make_reader
from relayrl.offline.reader import OfflineDataError
from relayrl.offline.sample_batch_json import sample_batch_line

OBS = gym.spaces.Box(-100.0, 100.0, (3,), np.float32)


def _columns(start, n):
    ids = np.arange(start, start + n)
    return {"t": ids % 10, "eps_id": ids // 10, "agent_index": np.zeros(n, int),
            "obs": np.repeat(ids[:, None], 3, axis=1).astype(np.float32), "actions": ids % 2,
            "rewards": np.ones(n), "dones": ids % 10 == 9,
            "new_obs": np.repeat(ids[:, None] + 1, 3, axis=1).astype(np.float32),
            "action_logp": np.zeros(n, np.float32), "infos": [{}] * n, "prev_actions": np.zeros(n, int)}


def write_json(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _config(input_, **offline):
    return (BCConfig().environment(observation_space=OBS, action_space=gym.spaces.Discrete(2))
            .offline_data(input_=input_, shuffle_buffer_size=0, **offline).training(train_batch_size=16)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))


def test_compressed_and_plain_lines_read_as_transition_rows(tmp_path):
    path = write_json(tmp_path / "data" / "out.json", [
        sample_batch_line(_columns(0, 20)),  # obs, new_obs compressed (RLlib's JsonWriter default)
        "",
        sample_batch_line(_columns(20, 5), compress_columns=()),
    ])
    reader = make_reader(_config(str(tmp_path / "data")).copy())  # a folder without parquet: its *.json files
    assert reader.num_rows == 25
    rows = reader.next_batch(25)
    assert np.array_equal(rows.columns["obs"][:, 0], np.arange(25))
    assert np.array_equal(rows.columns["new_obs"][:, 0], np.arange(1, 26))
    assert np.array_equal(rows.columns["terminateds"], np.arange(25) % 10 == 9)
    assert "infos" not in rows.columns and "prev_actions" not in rows.columns and "dones" not in rows.columns
    assert rows.where(22) == f"file {path}, line 3, row 2"
    assert reader.next_batch(3).columns["obs"][0, 0] == 0  # the next pass


def test_a_line_without_type_is_one_transition(tmp_path):
    lines = [json.dumps({"obs": [i, i, i], "actions": i % 2, "rewards": 1.0, "terminateds": False,
                         "new_obs": pack(np.full(3, i + 1.0))}) for i in range(3)]
    rows = make_reader(_config(write_json(tmp_path / "rows.jsonl", lines))).next_batch(3)
    assert np.array_equal(rows.columns["actions"], [0, 1, 0]) and rows.columns["obs"].shape == (3, 3)
    assert rows.where(2).endswith("rows.jsonl, line 3, row 0")


def test_bc_trains_from_json_through_the_learner_pipeline(tmp_path):
    path = write_json(tmp_path / "large.json", [sample_batch_line(_columns(i * 50, 50)) for i in range(4)])
    algo = _config(path, dataset_num_iters_per_learner=3).build_algo()
    try:
        result = algo.train()
        assert np.isfinite(result["learners"]["default_policy"]["policy_loss"])
        assert result["num_env_steps_trained_lifetime"] == 48
    finally:
        algo.stop()


def test_a_one_policy_multi_agent_batch_is_its_policy_s_rows(tmp_path):
    inner = json.loads(sample_batch_line(_columns(0, 8)))
    del inner["type"]
    path = write_json(tmp_path / "ma.json", [json.dumps({"type": "MultiAgentBatch", "count": 8,
                                                         "policy_batches": {"main": inner}})])
    rows = make_reader(_config(path, input_read_method="read_json")).next_batch(8)
    assert np.array_equal(rows.columns["actions"], np.arange(8) % 2)
    two = write_json(tmp_path / "ma2.json", [json.dumps({"type": "MultiAgentBatch", "count": 8,
                                                          "policy_batches": {"a": inner, "b": inner}})])
    with pytest.raises(OfflineDataError, match=r"ma2.json, line 1: a MultiAgentBatch of 2 policies"):
        make_reader(_config(two))


@pytest.mark.parametrize("line, match", [
    ('{"type": "SampleBatch", "obs": [[1, 2, 3]], "actions": [0], "rewards": [1.0], "dones": [fal',
     r"bad.json, line 2: not a JSON object"),
    ('{"type": "SampleBatch", "obs": [[1, 2, 3]], "rewards": [1.0], "dones": [false], "new_obs": [[1, 2, 3]]}',
     r"bad.json, line 2: no column 'actions'"),
    ('{"type": "SampleBatch", "obs": "bm90IGx6NA==", "actions": [0], "rewards": [1.0], "new_obs": [[1, 2, 3]]}',
     r"bad.json, line 2, column 'obs': a compressed cell that cannot be read"),
    ('{"type": "SampleBatch", "obs": [[1, 2, 3]], "actions": [0, 1], "rewards": [1.0], "new_obs": [[1, 2, 3]]}',
     r"bad.json, line 2, column 'actions': 2 rows, but the line's other columns hold 1"),
    ('{"type": "Episode", "obs": [[1, 2, 3]]}', r"bad.json, line 2: type 'Episode'"),
])
def test_bad_lines_are_named_by_file_line_and_column(tmp_path, line, match):
    path = write_json(tmp_path / "bad.json", [sample_batch_line(_columns(0, 4)), line])
    with pytest.raises(OfflineDataError, match=match):
        reader = make_reader(_config(path))
        reader.next_batch(5)


def test_values_outside_the_spaces_name_the_line(tmp_path):
    columns = _columns(0, 4)
    columns["actions"] = np.array([0, 1, 5, 0])
    path = write_json(tmp_path / "out.json", [sample_batch_line(columns)])
    algo = _config(path).training(train_batch_size=4).build_algo()
    try:
        with pytest.raises(OfflineDataError, match=r"out.json, line 1, row 2, column 'actions': action 5"):
            algo.train()
    finally:
        algo.stop()


def test_lines_with_other_extra_columns_are_named_and_the_columns_option_reads_them(tmp_path):
    without_logp = {k: v for k, v in _columns(10, 10).items() if k != "action_logp"}  # (KeyError, before)
    path = write_json(tmp_path / "d/large.json", [sample_batch_line(_columns(0, 10)), sample_batch_line(without_logp)])
    algo = _config(path).build_algo()
    try:
        with pytest.raises(OfflineDataError, match=r"line 2, row 0: no column 'action_logp', which file .*line 1"):
            algo.train()
    finally:
        algo.stop()
    columns = ["obs", "new_obs", "actions", "rewards", "terminateds", "eps_id"]
    rows = make_reader(_config(path, input_read_method_kwargs={"columns": columns})).next_batch(16)
    assert sorted(rows.columns) == sorted(columns) and len(rows) == 16  # (the option had no effect on JSON)


def test_mixing_json_and_parquet_is_refused(tmp_path):
    write_json(tmp_path / "a.json", [sample_batch_line(_columns(0, 4))])
    (tmp_path / "b.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match="mixes JSON"):
        make_reader(_config([str(tmp_path / "a.json"), str(tmp_path / "b.parquet")]))
    assert input_files(str(tmp_path))[1] == [str(tmp_path / "b.parquet")]  # a folder: parquet first


def test_a_pickle_that_runs_code_is_refused(tmp_path):
    import base64
    import pickle

    import lz4.frame

    evil = base64.b64encode(lz4.frame.compress(pickle.dumps(print))).decode()
    line = json.dumps({"type": "SampleBatch", "obs": evil, "actions": [0], "rewards": [1.0],
                       "new_obs": pack(np.zeros((1, 3)))})
    path = write_json(tmp_path / "evil.json", [line])
    with pytest.raises(OfflineDataError, match=r"evil.json, line 1, column 'obs'.*refused"):
        make_reader(_config(path)).next_batch(1)


@pytest.mark.slow
def test_json_through_ray_data_with_two_remote_learners(tmp_path):
    """The mix a user would try: old-stack JSON, remote Learners (Ray Data, each its shard), a multi-agent config
    training "main"; bad lines are named."""
    import ray

    path = write_json(tmp_path / "large.json", [sample_batch_line(_columns(i * 50, 50)) for i in range(4)])
    bad = write_json(tmp_path / "bad.json", [sample_batch_line(_columns(0, 4)), json.dumps(
        {"type": "SampleBatch", "obs": "bm90IGx6NA==", "actions": [0], "rewards": [1.0], "new_obs": [[1, 2, 3]]})])
    ray.init(address="local", num_cpus=4, include_dashboard=False)  # 2 Learners + the Ray Data read tasks
    try:
        config = (_config(path, dataset_num_iters_per_learner=2).learners(num_learners=2)
                  .multi_agent(policies={"main"}, policy_mapping_fn=lambda *a, **kw: "main"))  # rows train "main"
        algo = config.build_algo()
        try:
            assert algo.offline_data.num_rows == 200
            result = algo.train()
            assert result["num_env_steps_trained_lifetime"] == 32  # 2 updates x 2 Learners x 8 rows (16 / 2)
            assert np.isfinite(result["learners"]["main"]["policy_loss"])
        finally:
            algo.stop()
        with pytest.raises(Exception, match=r"bad.json, column 'obs': a compressed cell that cannot be read"):
            _config(bad, input_reader="ray_data").build_algo()
    finally:
        ray.shutdown()
