"""A Minari dataset holds the actions the env got (Minari's convention, what other tools read and write): Box
actions of a bounded space other than [-1, 1] are written in the env's units and read back into the module's
[-1, 1] range (normalize_actions); before, relayrl wrote the module's [-1, 1] actions into a dataset whose action
space is [0, 10], and read a third-party dataset's env actions as if they were the module's."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import IQLConfig, SACConfig
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
