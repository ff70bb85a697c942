"""Offline RL mixed with features that are not in test_offline_combinations.py or the feature matrix: recording
under MeanStdFilter, from IMPALA/APPO's remote runners and from a multi-agent recurrent PPO run; recurrent BC and
MARWIL; CQL and IQL on Dict observations; remote Learners resumed in a new process; the command line with a user's
env class; parallel evaluation's weights; episodes that span files."""
import collections
import glob
import inspect
import json
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

from relayrl import APPOConfig, DefaultModelConfig, IMPALAConfig, PPOConfig, SACConfig
from relayrl.algorithms.bc import BCConfig
from relayrl.algorithms.cql import CQLConfig
from relayrl.algorithms.iql import IQLConfig
from relayrl.algorithms.marwil import MARWILConfig
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.offline.episode_rows import decode_episode_state, episode_from_state
from test_offline_combinations import SideEnv

pq = pytest.importorskip("pyarrow.parquet")

QUIET = {"logger_config": {"type": "none"}}


def _files(folder) -> list:
    return sorted(glob.glob(f"{folder}/**/*.parquet", recursive=True))


def _array(value) -> np.ndarray:
    return np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)


class OffsetEnv(gym.Env):
    """Observations 50 + 10 x (x uniform in [-1, 1]^2), far from 0: a module fed them unfiltered saturates.
    Reward 1 for action 1 iff x[0] > 0; 20 steps an episode."""

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Box(-1000, 1000, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._observe(), {}

    def _observe(self):
        self.x = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return 50 + 10 * self.x

    def step(self, action):
        reward = float((action == 1) == (self.x[0] > 0))
        self.t += 1
        return self._observe(), reward, False, self.t >= 20, {}


def _bc_on_offset_env(folder, observation_filter):
    return (BCConfig().environment(OffsetEnv).env_runners(observation_filter=observation_filter)
            .rl_module(model_config={"fcnet_hiddens": [16]})
            .offline_data(input_=folder, dataset_num_iters_per_learner=100)
            .evaluation(evaluation_interval=1, evaluation_duration=10, evaluation_config={"explore": False})
            .debugging(seed=0, **QUIET).build_algo())


def test_recording_under_mean_std_filter_holds_filtered_observations_and_bc_filters_once(tmp_path):
    # RLlib's semantics: MeanStdFilter writes the normalised observation into the episode, so the recorder writes
    # filtered observations (with the recording run's statistics at that step). BC trains on them as they are; its
    # evaluation runners filter the env's raw observations once, with statistics of their own.
    ppo = (PPOConfig().environment(OffsetEnv)
           .env_runners(observation_filter="MeanStdFilter", num_envs_per_env_runner=4)
           .training(train_batch_size=800, minibatch_size=200, num_epochs=5, lr=3e-3)
           .rl_module(model_config={"fcnet_hiddens": [16]})
           .offline_data(output=str(tmp_path), output_write_episodes=False).debugging(seed=0, **QUIET).build_algo())
    try:
        for _ in range(8):
            returns = ppo.train()["env_runners"]["episode_return_mean"]
    finally:
        ppo.stop()
    assert returns > 15  # the recording policy is better than chance (10)
    obs = np.stack(pq.read_table(_files(tmp_path)).column("obs").to_pylist())
    assert np.abs(obs).max() < 15  # no raw observation (40-60) in the files, reset observations included
    assert np.abs(obs.mean(0)).max() < 0.3 and np.all(np.abs(obs.std(0) - 1) < 0.3)

    algo = _bc_on_offset_env(str(tmp_path), "MeanStdFilter")
    seen = []
    module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
    forward_train = module.forward_train
    module.forward_train = lambda batch, **kw: seen.append(_array(batch["obs"])) or forward_train(batch, **kw)
    try:
        for _ in range(3):
            result = algo.train()
        assert result["evaluation"]["env_runners"]["episode_return_mean"] > 17
    finally:
        algo.stop()
    recorded = {row.tobytes() for row in obs.astype(np.float32)}
    assert all(row.tobytes() in recorded for row in seen[0])  # the Learner does not filter the rows again

    unfiltered = _bc_on_offset_env(str(tmp_path), "NoFilter")  # the module would see raw observations: chance
    try:
        for _ in range(3):
            result = unfiltered.train()
        assert result["evaluation"]["env_runners"]["episode_return_mean"] < 14
    finally:
        unfiltered.stop()


@pytest.fixture
def ray_local():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield ray
    ray.shutdown()


def _chained(table) -> int:
    """How many recorded episodes are complete and in order: each row's new_obs is the next row's obs."""
    frame = table.to_pandas()
    complete = 0
    for _, rows in frame.groupby("eps_id", sort=False):
        obs, new_obs = np.stack(rows.obs.values), np.stack(rows.new_obs.values)
        assert np.array_equal(obs[1:], new_obs[:-1])
        complete += bool(rows.terminateds.values[-1] or rows.truncateds.values[-1])
    return complete


@pytest.mark.slow
@pytest.mark.parametrize("config_cls", [IMPALAConfig, APPOConfig])
def test_async_algorithms_with_two_remote_runners_record_every_step(tmp_path, ray_local, config_cls):
    rows, episodes = tmp_path / "rows", tmp_path / "episodes"
    for folder, write_episodes in ((rows, False), (episodes, True)):
        algo = (config_cls().environment("CartPole-v1").env_runners(num_env_runners=2, num_envs_per_env_runner=2)
                .rl_module(model_config={"fcnet_hiddens": [8]})
                .offline_data(output=str(folder), output_write_episodes=write_episodes, output_max_rows_per_file=300)
                .debugging(seed=0, **QUIET).build_algo())
        try:
            sampled = algo.train()["num_env_steps_sampled_lifetime"]
        finally:
            algo.stop()  # each runner writes the rows it still holds
        files = _files(folder)
        assert {os.path.basename(os.path.dirname(f))[:10] for f in files} == {"run-000001", "run-000002"}
        table = pq.read_table(files)
        # Runners keep sampling while the driver stops them: at least every counted step is in the files.
        if write_episodes:
            items = table.column("item").to_pylist()
            assert sum(len(episode_from_state(decode_episode_state(item))) for item in items) >= sampled
        else:
            assert table.num_rows >= sampled and _chained(table) > 0
        algo = (BCConfig().environment("CartPole-v1")
                .offline_data(input_=str(folder), input_read_episodes=write_episodes, dataset_num_iters_per_learner=2)
                .training(train_batch_size=64).debugging(seed=0, **QUIET).build_algo())
        try:
            assert algo.train()["num_env_steps_trained_lifetime"] == 128
        finally:
            algo.stop()


def _record_cartpole(folder, *, episodes: bool, samples: int = 2, rows_per_file: int = 10_000, **env_runners) -> str:
    algo = (PPOConfig().environment("CartPole-v1").env_runners(**env_runners)
            .training(train_batch_size=200, minibatch_size=200).rl_module(model_config={"fcnet_hiddens": [8]})
            .offline_data(output=str(folder), output_write_episodes=episodes, output_max_rows_per_file=rows_per_file)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        for _ in range(samples):
            algo.env_runner.sample()
    finally:
        algo.stop()
    return str(folder)


@pytest.mark.parametrize("config_cls", [BCConfig, MARWILConfig])
def test_recurrent_bc_and_marwil_train_on_sequences_of_episode_rows(tmp_path, config_cls):
    folder = _record_cartpole(tmp_path, episodes=True)
    algo = (config_cls().environment("CartPole-v1")
            .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=8, max_seq_len=5))
            .offline_data(input_=folder, input_read_episodes=True, dataset_num_iters_per_learner=2)
            .training(train_batch_size=64).evaluation(evaluation_interval=1, evaluation_duration=2)
            .debugging(seed=0, **QUIET).build_algo())
    seq_lens, timesteps = [], []
    module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
    forward_train = module.forward_train

    def spy(batch, **kwargs):
        seq_lens.append(_array(batch["seq_lens"]))
        timesteps.append(int(_array(batch["loss_mask"]).sum()))
        return forward_train(batch, **kwargs)

    module.forward_train = spy
    try:
        result = algo.train()
        assert np.isfinite(result["learners"][DEFAULT_MODULE_ID]["policy_loss"])
        assert result["evaluation"]["env_runners"]["num_episodes"] == 2  # the runners carry the LSTM's state
    finally:
        algo.stop()
    assert max(lengths.max() for lengths in seq_lens) == 5  # sequences of up to max_seq_len steps
    # Each update trains every timestep read: 64 steps need more than 64 // 5 padded sequences, and the ones past
    # 12 were dropped (55-59 steps trained).
    assert timesteps == [64, 64]  # (MARWIL's sequences hold one more, masked, step per episode for its returns)


class DictBoxEnv(gym.Env):
    """Dict observations, Box actions (CQL's and IQL's): reward -|a|."""

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,), np.float32),
                                                  "flag": gym.spaces.Discrete(3)})
        self.action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._observe(), {}

    def _observe(self):
        return {"pos": self.np_random.uniform(-1, 1, 2).astype(np.float32), "flag": int(self.np_random.integers(3))}

    def step(self, action):
        self.t += 1
        return self._observe(), -float(abs(action[0])), False, self.t >= 10, {}


def _flatten(env=None, spaces=None, device=None):
    return FlattenObservations()


@pytest.mark.parametrize("episodes", [False, True])
def test_cql_and_iql_on_dict_observations_through_flatten_observations(tmp_path, episodes):
    recorder = (SACConfig().environment(DictBoxEnv).env_runners(env_to_module_connector=_flatten)
                .rl_module(model_config={"fcnet_hiddens": [8]})
                .offline_data(output=str(tmp_path), output_write_episodes=episodes).debugging(seed=0, **QUIET)
                .build_algo())
    try:
        recorder.env_runner.sample(num_timesteps=200)
    finally:
        recorder.stop()
    for config_cls in (CQLConfig, IQLConfig):
        config = (config_cls().environment(DictBoxEnv).rl_module(model_config={"fcnet_hiddens": [8]})
                  .offline_data(input_=str(tmp_path), input_read_episodes=episodes, dataset_num_iters_per_learner=2)
                  .training(train_batch_size=64).evaluation(evaluation_interval=1, evaluation_duration=1)
                  .debugging(seed=0, **QUIET))
        with pytest.raises(ValueError, match="FlattenObservations"):  # refused when built, naming the fix
            config.build_algo()
        algo = config.env_runners(env_to_module_connector=_flatten).build_algo()
        try:
            assert algo.get_module().observation_space.shape == (5,)  # 2 + one-hot of 3
            result = algo.train()
            assert result["num_env_steps_trained_lifetime"] == 128  # (CQL, as SAC, trains at least 100 per train())
            assert result["evaluation"]["env_runners"]["num_episodes"] == 1
        finally:
            algo.stop()


@pytest.mark.parametrize("config_cls", [BCConfig, MARWILConfig])
def test_recurrent_module_on_transition_rows_is_refused_naming_episode_rows(tmp_path, config_cls):
    # Transition rows are one-step episodes: the LSTM trained on sequences of one step from the initial state,
    # padded to max_seq_len, and never learned to use its memory.
    folder = _record_cartpole(tmp_path, episodes=False, samples=1)
    config = (config_cls().environment("CartPole-v1").rl_module(model_config={"use_lstm": True, "max_seq_len": 5})
              .offline_data(input_=folder).debugging(seed=0, **QUIET))
    with pytest.raises(ValueError, match=r"recurrent.*offline_data\(input_read_episodes=True\)"):
        config.build_algo()
    # Minari datasets and old-stack JSON have no episode rows: the advice is the stateless module only.
    json_config = config.copy(copy_frozen=False).offline_data(input_=str(tmp_path / "data.json"))
    with pytest.raises(ValueError, match=r"old-stack JSON are read as transition rows only: use a stateless module"):
        json_config.build_algo()


def _record_multi_agent_lstm(folder, *, episodes: bool) -> dict:
    from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole

    algo = (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: f"p{agent_id}")
            .env_runners(num_envs_per_env_runner=1).training(train_batch_size=400, minibatch_size=100, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8], "use_lstm": True, "lstm_cell_size": 8, "max_seq_len": 10})
            .offline_data(output=str(folder), output_write_episodes=episodes).debugging(seed=0, **QUIET).build_algo())
    try:
        return algo.train()
    finally:
        algo.stop()


@pytest.mark.parametrize("episodes", [False, True])
def test_multi_agent_recurrent_recording_splits_into_single_agent_datasets_bc_reads(tmp_path, episodes):
    from relayrl.offline.reader import OfflineDataError
    from relayrl.offline.split_by_module import split_by_module

    result = _record_multi_agent_lstm(tmp_path / "rec", episodes=episodes)
    table = pq.read_table(_files(tmp_path / "rec"))
    if episodes:
        states = [decode_episode_state(item) for item in table.column("item").to_pylist()]
        steps = {m: sum(len(s["actions"]["data"]) for s in states if s["module_id"] == m) for m in ("p0", "p1")}
        assert all("state_out" in s["extra_model_outputs"] for s in states)  # the recorder's LSTM states
    else:
        steps = collections.Counter(table.column("module_id").to_pylist())
    # Every agent step is in the files: each module's steps are at least what the run sampled for it.
    sampled = result["env_runners"]["num_module_steps_sampled_lifetime"]
    assert all(steps[m] >= sampled[m] > 0 for m in ("p0", "p1"))

    model = ({"fcnet_hiddens": [8], "use_lstm": True, "lstm_cell_size": 16, "max_seq_len": 5} if episodes
             else {"fcnet_hiddens": [8]})

    def bc(folder):
        return (BCConfig().environment("CartPole-v1").rl_module(model_config=model)
                .offline_data(input_=folder, input_read_episodes=episodes, dataset_num_iters_per_learner=2)
                .training(train_batch_size=64).debugging(seed=0, **QUIET))

    with pytest.raises(OfflineDataError, match="split_by_module"):  # read as it is: refused, naming the split
        algo = bc(str(tmp_path / "rec")).build_algo()
        try:
            algo.train()
        finally:
            algo.stop()
    folders = split_by_module(str(tmp_path / "rec"), str(tmp_path / "split"))
    assert sorted(folders) == ["p0", "p1"]
    for module_id, folder in folders.items():
        # (Recurrent BC reads the episode rows with its own LSTM of another size: the recorder's states are
        # dropped, as RLlib's prelearner_use_recorded_module_states=False does.)
        algo = bc(folder).build_algo()
        try:
            assert algo.train()["num_env_steps_trained_lifetime"] == 128
        finally:
            algo.stop()
        split_table = pq.read_table(_files(folder))
        assert split_table.num_rows == (sum(1 for s in states if s["module_id"] == module_id) if episodes
                                        else steps[module_id])
    with pytest.raises(ValueError, match="holds no multi-agent rows"):
        split_by_module(folders["p0"], str(tmp_path / "again"))  # single-agent data: nothing to split


def test_recurrent_bc_starts_sequences_from_its_own_initial_state_not_the_recorders(tmp_path):
    # The recorder's LSTM (cell 8) wrote its state_out into the episode rows, and its 9-step rollout fragments cut
    # episodes into chunks. BC's LSTM (cell 16) took the recorded states as its own (a shape error), and a chunk
    # starting mid-episode without a recorded state stopped the update. RLlib's prelearner_use_recorded_module_states
    # (False) drops them: every sequence starts from the trained module's initial state.
    recorder = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=1, rollout_fragment_length=9)
                .rl_module(model_config={"fcnet_hiddens": [8], "use_lstm": True, "lstm_cell_size": 8})
                .offline_data(output=str(tmp_path)).debugging(seed=0, **QUIET).build_algo())
    try:
        for _ in range(20):
            recorder.env_runner.sample()
    finally:
        recorder.stop()
    states = [decode_episode_state(item) for item in pq.read_table(_files(tmp_path)).column("item").to_pylist()]
    assert any(s["t_started"] > 0 for s in states) and all("state_out" in s["extra_model_outputs"] for s in states)
    algo = (BCConfig().environment("CartPole-v1")
            .rl_module(model_config={"fcnet_hiddens": [8], "use_lstm": True, "lstm_cell_size": 16, "max_seq_len": 5})
            .offline_data(input_=str(tmp_path), input_read_episodes=True, dataset_num_iters_per_learner=4)
            .training(train_batch_size=32).debugging(seed=0, **QUIET).build_algo())
    try:
        assert algo.train()["num_env_steps_trained_lifetime"] == 128
    finally:
        algo.stop()


def _observation_rows(batches) -> list:
    return sorted(row.tobytes() for obs in batches for row in np.asarray(obs, np.float32).reshape(-1, 4))


@pytest.mark.parametrize("shuffle", [0, "auto"])
def test_episodes_spanning_files_train_every_step_once_per_pass(tmp_path, shuffle):
    # 10-step rollout fragments cut the episodes into chunks, 3 chunks a file: most episodes span files.
    folder = _record_cartpole(tmp_path, episodes=True, samples=15, rows_per_file=3, num_envs_per_env_runner=2,
                              rollout_fragment_length=10)
    chunks = [episode_from_state(decode_episode_state(item))
              for item in pq.read_table(_files(folder)).column("item").to_pylist()]
    files_of = collections.defaultdict(set)
    for path in _files(folder):
        for item in pq.read_table(path).column("item").to_pylist():
            files_of[decode_episode_state(item)["id_"]].add(path)
    assert sum(len(files) > 1 for files in files_of.values()) >= 5
    steps = sum(len(chunk) for chunk in chunks)
    assert steps == 300
    recorded = _observation_rows(chunk.get_observations(slice(0, len(chunk))) for chunk in chunks)

    algo = (BCConfig().environment("CartPole-v1")
            .offline_data(input_=folder, input_read_episodes=True, dataset_num_iters_per_learner=5,
                          shuffle_buffer_size=shuffle)
            .training(train_batch_size=30).debugging(seed=0, **QUIET).build_algo())
    seen = []
    module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
    forward_train = module.forward_train
    module.forward_train = lambda batch, **kw: seen.append(_array(batch["obs"])) or forward_train(batch, **kw)
    try:
        assert [algo.train()["num_env_steps_trained_lifetime"] for _ in range(2)] == [150, 300]
    finally:
        algo.stop()
    trained = _observation_rows(seen)
    if shuffle == 0:
        assert trained == recorded  # 10 updates of 30 steps: the pass, every step once
    else:  # the shuffle pool (larger than the data) tops up from the next pass before this one is out
        assert len(trained) == 300 and set(trained) <= set(recorded)


@pytest.mark.slow
@pytest.mark.parametrize("config_cls", [CQLConfig, IQLConfig])
def test_parallel_evaluation_on_a_remote_runner_uses_the_weights_before_the_step(tmp_path, ray_local, config_cls):
    # RLlib's semantics: evaluation_parallel_to_training evaluates, during iteration i's update, the weights of
    # iteration i - 1; sequential evaluation the weights iteration i ends with.
    folder = str(tmp_path)
    recorder = (SACConfig().environment("Pendulum-v1").rl_module(model_config={"fcnet_hiddens": [8]})
                .offline_data(output=folder, output_write_episodes=False).debugging(seed=0, **QUIET).build_algo())
    try:
        recorder.env_runner.sample(num_timesteps=300)
    finally:
        recorder.stop()
    for parallel in (True, False):
        algo = (config_cls().environment("Pendulum-v1").rl_module(model_config={"fcnet_hiddens": [8]})
                .offline_data(input_=folder, dataset_num_iters_per_learner=2).training(train_batch_size=64)
                .evaluation(evaluation_interval=1, evaluation_duration=1, evaluation_num_env_runners=1,
                            evaluation_parallel_to_training=parallel)
                .debugging(seed=0, **QUIET).build_algo())
        try:
            weights = [algo.learner_group.get_weights()[DEFAULT_MODULE_ID]]
            for iteration in range(1, 4):
                result = algo.train()
                weights.append(algo.learner_group.get_weights()[DEFAULT_MODULE_ID])
                evaluated, = algo.eval_env_runner_group.foreach_env_runner(
                    lambda runner: runner.module.get_state(), local_env_runner=False)
                evaluated = evaluated.get(DEFAULT_MODULE_ID, evaluated)  # (the runner's inference-only module)
                same = [i for i, w in enumerate(weights)
                        if all(np.array_equal(_array(w[k]), _array(v)) for k, v in evaluated.items())]
                assert same == [iteration - 1 if parallel else iteration], (parallel, iteration)
                assert result["evaluation"]["env_runners"]["num_episodes"] == 1
                assert result["training_iteration"] == iteration
        finally:
            algo.stop()


# A user's env module for the command line: test_offline_combinations.py's SideEnv, written out as a file.
SIDE_ENVS_MODULE = "import gymnasium as gym\nimport numpy as np\n\n\n" + inspect.getsource(SideEnv)


def _expert_side_rows(folder) -> str:
    """2,000 transition rows of SideEnv's optimal policy."""
    import pyarrow as pa

    rng = np.random.default_rng(0)
    obs = rng.uniform(-1, 1, (2000, 2)).astype(np.float32)
    os.makedirs(folder, exist_ok=True)
    pq.write_table(pa.table({
        "eps_id": [str(i // 20) for i in range(2000)], "obs": list(obs), "actions": (obs[:, 0] > 0).astype(np.int64),
        "rewards": np.ones(2000), "new_obs": list(rng.uniform(-1, 1, (2000, 2)).astype(np.float32)),
        "terminateds": np.zeros(2000, bool), "truncateds": np.arange(2000) % 20 == 19}), f"{folder}/rows.parquet")
    return str(folder)


def _cli_run_dir(tmp_path, name) -> tuple:
    run_dir = tmp_path / name
    return run_dir, ["--logger-config", json.dumps({"type": "json", "logdir": str(run_dir)})]


def test_command_line_bc_then_evaluate_with_a_users_env_class(tmp_path, monkeypatch, capsys):
    from relayrl.cli import main

    (tmp_path / "side_envs_mixes.py").write_text(textwrap.dedent(SIDE_ENVS_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    data = _expert_side_rows(tmp_path / "data")
    run_dir, logdir = _cli_run_dir(tmp_path, "side")
    assert main(["train", "BC", "--input", data, "--env", "side_envs_mixes:SideEnv", "--env-config",
                 '{"max_steps": 10}', "--stop-iters", "2", "--dataset-num-iters-per-learner", "30", *logdir]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(run_dir), "--episodes", "3"]) == 2  # the checkpoint names a module not trusted
    assert "--trust" in capsys.readouterr().err
    assert main(["evaluate", str(run_dir), "--episodes", "3", "--trust", "side_envs_mixes"]) == 0
    mean = float(capsys.readouterr().out.split("mean return over 3 episodes:")[1].split()[0])
    assert mean >= 9  # BC learned the rule (chance: 5 of 10; an obs[0] near 0 may still go wrong)


def test_command_line_bc_on_cartpole_rows_then_evaluate_and_bad_rows_in_one_line(tmp_path, capsys):
    from relayrl.cli import main

    folder = _record_cartpole(tmp_path / "rows", episodes=False, samples=1)
    run_dir, logdir = _cli_run_dir(tmp_path, "cartpole")
    assert main(["train", "BC", "--input", folder, "--env", "CartPole-v1", "--stop-iters", "1", *logdir]) == 0
    assert main(["evaluate", str(run_dir), "--episodes", "1"]) == 0
    assert "mean return over 1 episodes" in capsys.readouterr().out

    # CartPole's rows read with another env's space: one line naming the file, row and column (a traceback before).
    bad_dir, logdir = _cli_run_dir(tmp_path, "bad")
    (tmp_path / "side_envs_bad.py").write_text(textwrap.dedent(SIDE_ENVS_MODULE))
    sys.path.insert(0, str(tmp_path))
    try:
        code = main(["train", "BC", "--input", folder, "--env", "side_envs_bad:SideEnv", "--stop-iters", "1",
                     *logdir])
    finally:
        sys.path.remove(str(tmp_path))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "relayrl train BC: error: offline data: file" in err and "column 'obs'" in err


REMOTE_LEARNERS_SCRIPT = '''
import sys

import numpy as np
import ray

from relayrl import Algorithm
from relayrl.algorithms.bc import BCConfig

mode, data, checkpoint, out = sys.argv[1:5]
ray.init(address="local", num_cpus=2, include_dashboard=False)
if mode == "first":
    algo = (BCConfig().environment("CartPole-v1").learners(num_learners=2)
            .offline_data(input_=data, input_reader="embedded", dataset_num_iters_per_learner=3)
            .training(train_batch_size=64).debugging(seed=0, logger_config={"type": "none"}).build_algo())
    for _ in range(2):
        algo.train()
    algo.save_to_path(checkpoint)
else:
    algo = Algorithm.from_checkpoint(checkpoint)
for _ in range(2):
    result = algo.train()
weights = algo.learner_group.get_weights()["default_policy"]
np.savez(out, trained=result["num_env_steps_trained_lifetime"], **{k: np.asarray(v) for k, v in weights.items()})
algo.stop()
ray.shutdown()
'''


@pytest.mark.slow
def test_remote_learners_resume_their_pass_and_weights_in_a_new_process(tmp_path):
    # Two remote Learners fed by the embedded reader in the driver: a checkpoint after 2 iterations, restored in a
    # new process, trains 2 more to the weights of one 4-iteration run (the reader's position is in the checkpoint).
    # (Through Ray Data the position is not stored: a restored run starts its pass over; docs/offline.md.)
    pytest.importorskip("ray")
    data = _record_cartpole(tmp_path / "rows", episodes=False, samples=1)
    script, checkpoint = tmp_path / "remote_learners.py", tmp_path / "checkpoint"
    script.write_text(REMOTE_LEARNERS_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    for mode in ("first", "resumed"):
        done = subprocess.run([sys.executable, str(script), mode, data, str(checkpoint), str(tmp_path / f"{mode}.npz")],
                              capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
    first, resumed = np.load(tmp_path / "first.npz"), np.load(tmp_path / "resumed.npz")
    assert int(first["trained"]) == int(resumed["trained"]) == 4 * 3 * 64
    assert sorted(first.files) == sorted(resumed.files)
    for name in first.files:
        np.testing.assert_array_equal(first[name], resumed[name])
