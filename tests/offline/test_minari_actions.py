"""A Minari dataset holds the actions the env got (Minari's convention, what other tools read and write): Box
actions of a bounded space other than [-1, 1] are written in the env's units and read back into the module's
[-1, 1] range (normalize_actions); before, relayrl wrote the module's [-1, 1] actions into a dataset whose action
space is [0, 10], and read a third-party dataset's env actions as if they were the module's."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import BCConfig, IQLConfig, SACConfig
from relayrl.offline.offline_data import make_reader

QUIET = {"logger_config": {"type": "none"}}


class Heater(gym.Env):
    """Heater power in [0, 10]; every action the env gets is logged."""

    log = []

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Box(-50.0, 50.0, (1,), np.float32)
        self.action_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.temp, self.t = 0.0, 0
        return np.array([self.temp], np.float32), {}

    def step(self, action):
        Heater.log.append(float(action[0]))
        self.temp, self.t = 0.8 * self.temp + 0.2 * float(action[0]), self.t + 1
        return np.array([self.temp], np.float32), -abs(self.temp - 5.0), False, self.t >= 10, {}


def test_minari_holds_the_envs_actions_and_reads_back_the_modules(tmp_path, monkeypatch):
    minari = pytest.importorskip("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    Heater.log = []
    recorder = (SACConfig().environment(Heater).rl_module(model_config={"fcnet_hiddens": [8]})
                .offline_data(output="minari://me/heater-v0").debugging(seed=0, **QUIET).build_algo())
    try:
        recorder.env_runner.sample(num_timesteps=40, random_actions=False)
    finally:
        recorder.stop()
    dataset = minari.load_dataset("me/heater-v0")
    written = np.concatenate([episode.actions.ravel() for episode in dataset.iterate_episodes()])
    assert written.min() >= 0.0 and written.max() <= 10.0 and np.ptp(written) > 1.0
    np.testing.assert_allclose(np.sort(written), np.sort(Heater.log[:len(written)]), rtol=1e-5)

    config = (IQLConfig().environment(Heater).offline_data(input_="minari://me/heater-v0", shuffle_buffer_size=0)
              .debugging(seed=0, **QUIET))
    read = make_reader(config).next_batch(len(written)).columns["actions"].ravel()
    np.testing.assert_allclose(read, written / 5.0 - 1.0, rtol=1e-5, atol=1e-6)  # [0, 10] -> [-1, 1]
    assert read.min() >= -1.0 and read.max() <= 1.0
    raw = make_reader(config.copy(copy_frozen=False).environment(normalize_actions=False))
    np.testing.assert_allclose(raw.next_batch(len(written)).columns["actions"].ravel(), written, rtol=1e-6)


class SetPoint(gym.Env):
    """Heat to 5: the temperature moves halfway to the power in [0, 10]; a scripted expert writes the dataset."""

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Box(-50.0, 50.0, (1,), np.float32)
        self.action_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.temp, self.t = float(self.np_random.uniform(0, 10)), 0
        return np.array([self.temp], np.float32), {}

    def step(self, action):
        self.temp, self.t = 0.5 * self.temp + 0.5 * float(np.clip(action[0], 0, 10)), self.t + 1
        return np.array([self.temp], np.float32), -abs(self.temp - 5.0), False, self.t >= 10, {}


def test_bc_from_a_third_party_dataset_of_env_actions_imitates_its_expert(tmp_path, monkeypatch):
    """A dataset written with Minari's own API (the env's units): BC's greedy return -0.9 (the expert's first
    step costs ~-2.5 an episode at most); before, the [0, 10] actions trained the module's [-1, 1] range and the
    policy saturated at full power (-45)."""
    minari = pytest.importorskip("minari")
    from minari.data_collector import EpisodeBuffer

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    env, buffers = SetPoint(), []
    for seed in range(100):
        obs, _ = env.reset(seed=seed)
        observations, actions, rewards = [obs], [], []
        for _ in range(10):
            actions.append(np.clip(10.0 - obs, 0.0, 10.0).astype(np.float32))  # the power that reaches 5 at once
            obs, reward, _, _, _ = env.step(actions[-1])
            observations.append(obs)
            rewards.append(reward)
        buffers.append(EpisodeBuffer(observations=np.stack(observations), actions=np.stack(actions), rewards=rewards,
                                     terminations=[False] * 10, truncations=[False] * 9 + [True]))
    minari.create_dataset_from_buffers("third/setpoint-v0", buffers, observation_space=env.observation_space,
                                       action_space=env.action_space, algorithm_name="scripted", author="tests",
                                       author_email="tests@example.org", code_permalink="https://example.org")
    algo = (BCConfig().environment(SetPoint)
            .offline_data(input_="minari://third/setpoint-v0", dataset_num_iters_per_learner=100)
            .training(train_batch_size=128)
            .evaluation(evaluation_interval=4, evaluation_duration=10, evaluation_config={"explore": False})
            .debugging(seed=0, **QUIET).build_algo())
    try:
        for _ in range(4):
            result = algo.train()
        assert result["evaluation"]["env_runners"]["episode_return_mean"] > -5.0
    finally:
        algo.stop()
