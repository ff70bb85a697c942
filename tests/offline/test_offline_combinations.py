"""Offline algorithms mixed with the library's other features the way users mix them: a user's own env class
(with env_config, Discrete or Dict observations), checkpoints restored and trained further, BC's module moved into
PPO, callbacks, and Learner connector pieces on offline rows and episodes. Fast: small data, a few updates each."""
import glob

import gymnasium as gym
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from relayrl import Algorithm, ConnectorV2, PPOConfig, RLlibCallback
from relayrl.algorithms.bc import BCConfig
from relayrl.algorithms.cql import CQLConfig
from relayrl.algorithms.iql import IQLConfig
from relayrl.algorithms.marwil import MARWILConfig
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.core.columns import DEFAULT_MODULE_ID

QUIET = {"logger_config": {"type": "none"}}


class SideEnv(gym.Env):
    """A user's env: reward 1 for action 1 when obs[0] > 0 and action 0 otherwise; `max_steps` from env_config."""

    def __init__(self, config=None):
        self.max_steps = (config or {}).get("max_steps", 20)
        self.observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.x = 0, self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x, {}

    def step(self, action):
        reward = float((action == 1) == (self.x[0] > 0))
        self.t, self.x = self.t + 1, self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x, reward, False, self.t >= self.max_steps, {}


class DiscreteObsEnv(SideEnv):
    """Discrete(5) observations: the default module needs FlattenObservations (one-hot)."""

    def __init__(self, config=None):
        super().__init__(config)
        self.observation_space = gym.spaces.Discrete(5)

    def reset(self, *, seed=None, options=None):
        gym.Env.reset(self, seed=seed)
        self.t, self.s = 0, int(self.np_random.integers(5))
        return self.s, {}

    def step(self, action):
        reward = float(action == self.s % 2)
        self.t, self.s = self.t + 1, int(self.np_random.integers(5))
        return self.s, reward, False, self.t >= self.max_steps, {}


class DictObsEnv(SideEnv):
    def __init__(self, config=None):
        super().__init__(config)
        self.observation_space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,), np.float32),
                                                  "flag": gym.spaces.Discrete(3)})

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        return {"pos": obs, "flag": 0}, info

    def step(self, action):
        obs, *rest = super().step(action)
        return ({"pos": obs, "flag": int(self.np_random.integers(3))}, *rest)


def flatten(env=None, spaces=None, device=None):
    return FlattenObservations()


@pytest.fixture(scope="module")
def expert_rows(tmp_path_factory):
    """2,000 SideEnv transition rows of the optimal policy (written by hand, obs as list<float> columns)."""
    rng = np.random.default_rng(0)
    n = 2000
    obs = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    folder = tmp_path_factory.mktemp("side_expert")
    pq.write_table(pa.table({
        "eps_id": [str(i // 20) for i in range(n)], "obs": list(obs), "actions": (obs[:, 0] > 0).astype(np.int64),
        "rewards": np.ones(n), "new_obs": list(rng.uniform(-1, 1, (n, 2)).astype(np.float32)),
        "terminateds": np.zeros(n, bool), "truncateds": np.arange(n) % 20 == 19}), folder / "rows.parquet")
    return str(folder)


def _record(env_cls, folder, *, episodes: bool, connector=None) -> str:
    config = (PPOConfig().environment(env_cls, env_config={"max_steps": 10})
              .env_runners(num_envs_per_env_runner=1, env_to_module_connector=connector)
              .rl_module(model_config={"fcnet_hiddens": [8]})
              .offline_data(output=str(folder), output_write_episodes=episodes).debugging(seed=0, **QUIET))
    algo = config.build_algo()
    try:
        algo.env_runner.sample(num_timesteps=200)
    finally:
        algo.stop()
    assert glob.glob(f"{folder}/**/*.parquet", recursive=True)
    return str(folder)


@pytest.mark.parametrize("env_cls,episodes", [(DiscreteObsEnv, False), (DictObsEnv, False), (DictObsEnv, True)])
def test_bc_reads_what_ppo_recorded_through_flatten_observations(tmp_path, env_cls, episodes):
    # The recorder writes the observations the module saw (one-hot / flattened); BC with the same env-to-module
    # connector builds its module for those (it was built for the env's Discrete/Dict space and failed).
    folder = _record(env_cls, tmp_path, episodes=episodes, connector=flatten)
    algo = (BCConfig().environment(env_cls, env_config={"max_steps": 10}).env_runners(env_to_module_connector=flatten)
            .offline_data(input_=folder, input_read_episodes=episodes, dataset_num_iters_per_learner=2)
            .training(train_batch_size=32).evaluation(evaluation_interval=1, evaluation_duration=2)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        result = algo.train()
        assert np.isfinite(result["learners"][DEFAULT_MODULE_ID]["policy_loss"])
        assert result["evaluation"]["env_runners"]["episode_len_mean"] == 10  # the env_config reached the env
        assert result["num_env_steps_trained_lifetime"] == 64
    finally:
        algo.stop()


def test_frame_stacking_on_episode_rows(tmp_path):
    # FrameStacking stacks in the batch (it writes no episode): the rows hold single frames, the module sees 3.
    # The Learner's module was built for single frames and the first update failed (6 vs 2 inputs).
    from relayrl.connectors.common.frame_stacking import FrameStackingEnvToModule, FrameStackingLearner

    folder = _record(SideEnv, tmp_path, episodes=True)
    algo = (MARWILConfig().environment(SideEnv, env_config={"max_steps": 10})
            .env_runners(env_to_module_connector=lambda env, spaces, device: FrameStackingEnvToModule(num_frames=3))
            .learners(learner_connector=lambda obs, act: FrameStackingLearner(num_frames=3))
            .offline_data(input_=folder, input_read_episodes=True, dataset_num_iters_per_learner=2)
            .training(train_batch_size=32).evaluation(evaluation_interval=1, evaluation_duration=1)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        assert algo.get_module().observation_space.shape == (6,)
        result = algo.train()
        assert np.isfinite(result["learners"][DEFAULT_MODULE_ID]["policy_loss"])
        assert result["evaluation"]["env_runners"]["num_episodes"] == 1
        assert algo.compute_single_action(np.zeros(2, np.float32), explore=False) in (0, 1)
    finally:
        algo.stop()


def test_bc_module_checkpoint_into_ppo_with_a_custom_model_config(tmp_path, expert_rows):
    model_config = {"fcnet_hiddens": [32, 16]}
    bc = (BCConfig().environment(SideEnv).rl_module(model_config=model_config)
          .offline_data(input_=expert_rows, dataset_num_iters_per_learner=60).debugging(seed=0, **QUIET).build_algo())
    bc.train()
    path = bc.save_to_path(str(tmp_path / "bc"))
    bc_weights = bc.learner_group.get_weights()[DEFAULT_MODULE_ID]
    bc.stop()
    ppo = (PPOConfig().environment(SideEnv).rl_module(model_config=model_config)
           .training(train_batch_size=100, minibatch_size=50, num_epochs=1, lr=1e-5)
           .evaluation(evaluation_interval=1, evaluation_duration=5, evaluation_config={"explore": False})
           .debugging(seed=0, **QUIET).build_algo())
    try:
        # The checkpoint root with the module's component (docs/checkpoints.md); refused before as "a BC checkpoint".
        ppo.restore_from_path(path, component="learner_group/learner/rl_module")
        ppo_weights = ppo.learner_group.get_weights()[DEFAULT_MODULE_ID]
        assert all(np.allclose(np.asarray(bc_weights[k]), np.asarray(ppo_weights[k])) for k in bc_weights)
        result = ppo.train()  # the EnvRunners act with BC's policy: near the best return of 20
        assert result["evaluation"]["env_runners"]["episode_return_mean"] >= 17
    finally:
        ppo.stop()


@pytest.mark.parametrize("config_cls", [BCConfig, MARWILConfig, IQLConfig])
def test_restored_offline_algorithm_with_a_user_env_trains_on(tmp_path, expert_rows, config_cls):
    config = (config_cls().environment(SideEnv, env_config={"max_steps": 7})
              .offline_data(input_=expert_rows, dataset_num_iters_per_learner=2).training(train_batch_size=32)
              .evaluation(evaluation_interval=1, evaluation_duration=2).debugging(seed=0, **QUIET))
    algo = config.build_algo()
    algo.train()
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    algo.train()
    expected = {k: np.asarray(v) for k, v in algo.learner_group.get_weights()[DEFAULT_MODULE_ID].items()}
    algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[SideEnv])  # a user class: named by the caller
    try:
        assert type(restored).__name__ == config_cls.__name__.replace("Config", "")
        assert restored.config.env_config == {"max_steps": 7}
        result = restored.train()
        assert result["training_iteration"] == 2 and result["num_env_steps_trained_lifetime"] == 128
        assert result["evaluation"]["env_runners"]["episode_len_mean"] == 7
        got = restored.learner_group.get_weights()[DEFAULT_MODULE_ID]
        assert all(np.allclose(expected[k], np.asarray(got[k]), atol=1e-6) for k in expected)  # same next batch
    finally:
        restored.stop()


class OrderCallbacks(RLlibCallback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_algorithm_init(self, *, algorithm, **kwargs):
        self.calls.append("init")

    def on_evaluate_end(self, *, algorithm, evaluation_metrics, **kwargs):
        self.calls.append("evaluate_end")
        evaluation_metrics["my_eval_flag"] = 1

    def on_train_result(self, *, algorithm, result, **kwargs):
        self.calls.append("train_result")
        result["my_train_flag"] = 1

    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs):
        metrics_logger.log_value("my_episode_len", len(episode))


def test_offline_callbacks_see_training_and_evaluation(expert_rows):
    algo = (BCConfig().environment(SideEnv, env_config={"max_steps": 5}).callbacks(OrderCallbacks)
            .offline_data(input_=expert_rows).training(train_batch_size=32)
            .evaluation(evaluation_interval=1, evaluation_duration=2).debugging(seed=0, **QUIET).build_algo())
    try:
        result = algo.train()
        assert algo.callbacks.calls == ["init", "evaluate_end", "train_result"]
        assert result["my_train_flag"] == 1 and result["evaluation"]["my_eval_flag"] == 1
        assert result["evaluation"]["env_runners"]["my_episode_len"] == 5
    finally:
        algo.stop()


class CountSteps(ConnectorV2):
    """A user's Learner piece (before the default ones): it sees the one-step episodes the rows became."""

    seen = []

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        CountSteps.seen.append(len(episodes))
        return batch


@pytest.mark.parametrize("config_cls", [MARWILConfig, IQLConfig])
def test_learner_connector_piece_runs_on_offline_rows(expert_rows, config_cls):
    CountSteps.seen = []
    algo = (config_cls().environment(SideEnv).learners(learner_connector=lambda obs, act: CountSteps())
            .offline_data(input_=expert_rows, dataset_num_iters_per_learner=2).training(train_batch_size=16)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        algo.train()
        assert CountSteps.seen == [16, 16]  # every row (a one-step episode) of both batches
    finally:
        algo.stop()


@pytest.mark.parametrize("config_cls", [BCConfig, MARWILConfig, CQLConfig, IQLConfig])
def test_train_batch_size_sets_the_offline_batch(config_cls):
    # CQL's train_batch_size_per_learner was fixed at 256 (RLlib's), so `.training(train_batch_size=32)` did nothing.
    config = config_cls().training(train_batch_size=32)
    assert config.train_batch_size_per_learner == 32
    assert config_cls().train_batch_size_per_learner == 256  # the default batch is unchanged
    assert config_cls().training(train_batch_size_per_learner=64).train_batch_size_per_learner == 64


def test_compute_single_action_after_offline_training(expert_rows):
    # Offline algorithms have no training EnvRunner; compute_single_action said to build one, which a user cannot.
    algo = (BCConfig().environment(SideEnv).offline_data(input_=expert_rows, dataset_num_iters_per_learner=60)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        algo.train()
        observations = np.random.default_rng(1).uniform(-1, 1, (64, 2)).astype(np.float32)
        actions = algo.compute_actions(list(observations), explore=False)
        assert (actions == (observations[:, 0] > 0)).mean() > 0.9  # the expert's rule, learned
        right = np.array([0.9, 0.0], np.float32)
        assert algo.compute_single_action(right, explore=False) == 1
        weights = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
        algo.learner_group.set_weights({DEFAULT_MODULE_ID: {  # the policy head negated: the other action
            k: -v if k.startswith("pi.") else v for k, v in weights.items()}})
        assert algo.compute_single_action(right, explore=False) == 0  # acts with the Learner's current weights
    finally:
        algo.stop()


def test_compute_single_action_with_discrete_observations(tmp_path):
    folder = _record(DiscreteObsEnv, tmp_path, episodes=False, connector=flatten)
    algo = (BCConfig().environment(DiscreteObsEnv).env_runners(env_to_module_connector=flatten)
            .offline_data(input_=folder).debugging(seed=0, **QUIET).build_algo())
    try:
        algo.train()
        assert algo.compute_single_action(3, explore=False) in (0, 1)  # one-hot by the env-to-module pipeline
    finally:
        algo.stop()


def test_compute_single_action_without_an_env_names_the_fix(expert_rows):
    env = SideEnv()
    algo = (BCConfig().environment(observation_space=env.observation_space, action_space=env.action_space)
            .offline_data(input_=expert_rows).debugging(seed=0, **QUIET).build_algo())
    try:
        with pytest.raises(ValueError, match=r"need an env.*config.environment\(env=...\).*forward_inference"):
            algo.compute_single_action(np.zeros(2, np.float32))
    finally:
        algo.stop()


def test_relative_input_in_a_tune_trial_means_the_launch_folder(tmp_path, monkeypatch, expert_rows):
    # A Tune trial runs in its own working folder (Ray sets TUNE_ORIG_WORKING_DIR to the launch folder), so
    # input_="data" failed with "no such file or folder" in every trial.
    import shutil

    launch, trial = tmp_path / "launch", tmp_path / "trial"
    shutil.copytree(expert_rows, launch / "data")
    trial.mkdir()
    monkeypatch.setenv("TUNE_ORIG_WORKING_DIR", str(launch))
    monkeypatch.chdir(trial)
    for input_ in ("data", "data/*.parquet", "local://data", ["data"]):
        algo = BCConfig().environment(SideEnv).offline_data(input_=input_).debugging(**QUIET).build_algo()
        try:
            assert algo.train()["num_env_steps_trained_lifetime"] == 256
        finally:
            algo.stop()
    with pytest.raises(ValueError, match="no such file or folder.*Under Tune, give an absolute path"):
        BCConfig().environment(SideEnv).offline_data(input_="elsewhere").build_algo()
    (trial / "data").mkdir()  # one in the trial's own folder is the one meant
    with pytest.raises(ValueError, match="matches no parquet or JSON file"):
        BCConfig().environment(SideEnv).offline_data(input_="data").build_algo()


def test_spaces_only_with_flatten_observations(tmp_path):
    # RLlib's offline pattern gives the spaces and no env; the config's Discrete space overrode FlattenObservations'
    # one-hot space for the module, which then refused to build (online PPO with observation_space= too).
    folder = _record(DiscreteObsEnv, tmp_path, episodes=False, connector=flatten)
    env = DiscreteObsEnv()
    algo = (BCConfig().environment(observation_space=env.observation_space, action_space=env.action_space)
            .env_runners(env_to_module_connector=flatten).offline_data(input_=folder).training(train_batch_size=32)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        assert algo.get_module().observation_space == gym.spaces.Box(0.0, 1.0, (5,), np.float32)
        assert algo.train()["num_env_steps_trained_lifetime"] == 32
    finally:
        algo.stop()
    ppo = (PPOConfig().environment(DiscreteObsEnv, observation_space=env.observation_space)
           .env_runners(env_to_module_connector=flatten).training(train_batch_size=64, minibatch_size=32, num_epochs=1)
           .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, **QUIET).build_algo())
    try:
        assert ppo.train()["num_env_steps_sampled_lifetime"] >= 64
    finally:
        ppo.stop()


def test_acting_copies_the_learners_weights_only_when_they_changed(expert_rows, tmp_path):
    """compute_single_action copied every weight of the Learner into the inference EnvRunner at every call."""
    algo = (BCConfig().environment(SideEnv).offline_data(input_=expert_rows, dataset_num_iters_per_learner=60)
            .debugging(seed=0, **QUIET).build_algo())
    try:
        observations = list(np.random.default_rng(1).uniform(-1, 1, (64, 2)).astype(np.float32))
        expert = np.array([obs[0] > 0 for obs in observations])
        untrained = algo.compute_actions(observations, explore=False)
        runner = algo.inference_env_runner()
        copies = []
        set_state = runner.set_state
        runner.set_state = lambda state: (copies.append(state), set_state(state))[1]
        algo.compute_single_action(observations[0], explore=False)
        assert (algo.compute_actions(observations, explore=False) == untrained).all() and copies == []
        algo.save_to_path(tmp_path / "untrained")
        algo.train()
        trained = algo.compute_actions(observations, explore=False)
        assert len(copies) == 1 and (trained == expert).mean() > 0.9 > (untrained == expert).mean()
        algo.compute_single_action(observations[0], explore=False)
        assert len(copies) == 1  # nothing changed since
        algo.restore_from_path(tmp_path / "untrained")
        assert (algo.compute_actions(observations, explore=False) == untrained).all() and len(copies) == 2
        with torch.no_grad():  # the Learner's module changed in place, behind the algorithm's back
            for name, param in algo.get_module().named_parameters():
                param.copy_(-param) if name.startswith("pi.") else None
        algo.compute_single_action(observations[0], explore=False)
        assert len(copies) == 3
    finally:
        algo.stop()
