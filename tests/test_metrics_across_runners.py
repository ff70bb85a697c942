"""Custom episode metrics from two EnvRunners merged exactly into one MetricsLogger (every reduce mode).

Runner 1: CountingEnv episodes of length 3, reward_scale 1 -> return 1+2+3 = 6, 2 episodes sampled.
Runner 2: length 4, reward_scale 2 -> return 2*(1+2+3+4) = 20, 3 episodes sampled.
The callback logs `return + n` for the runner's n-th episode (n = 1, 2, ...):
runner 1 -> [7, 8], runner 2 -> [21, 22, 23].
"""
import pytest

from relayrl import PPOConfig
from relayrl.callbacks import RLlibCallback
from relayrl.env.env_runner import EnvRunner
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.testing.envs import CountingEnv


class EpisodeMetrics(RLlibCallback):
    def __init__(self):
        super().__init__()
        self.n = 0

    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs):
        self.n += 1
        value = float(episode.get_return()) + self.n
        metrics_logger.log_value("custom_mean", value, reduce="mean", window=100)
        metrics_logger.log_value("custom_mean_w3", value, reduce="mean", window=3)
        metrics_logger.log_value("custom_min", value, reduce="min")
        metrics_logger.log_value("custom_max", value, reduce="max")
        metrics_logger.log_value("custom_sum", value, reduce="sum")
        metrics_logger.log_value("custom_list", value, reduce=None)


def make_runner(worker_index, episode_len, reward_scale):
    config = (
        PPOConfig()
        .environment(CountingEnv, env_config={"episode_len": episode_len, "reward_scale": reward_scale})
        .env_runners(num_envs_per_env_runner=1)
        .callbacks(EpisodeMetrics)
        .debugging(seed=0)
    )
    return EnvRunner(config=config, worker_index=worker_index)


@pytest.fixture
def runners():
    runners = [make_runner(1, 3, 1.0), make_runner(2, 4, 2.0)]
    yield runners
    for runner in runners:
        runner.stop()


def sample(runners, counts=(2, 3)):
    for runner, n in zip(runners, counts):
        episodes = runner.sample(num_episodes=n)
        assert len(episodes) == n


def test_every_reduce_mode_merges_exactly(runners):
    sample(runners)
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([r.get_metrics() for r in runners], key="env_runners")
    out = parent.reduce()["env_runners"]

    values = [7.0, 8.0, 21.0, 22.0, 23.0]
    # Windowed mean over the union of all 5 episodes -- not the mean of the runners' means (14.75).
    assert out["custom_mean"] == pytest.approx(sum(values) / 5) == pytest.approx(16.2)
    assert out["custom_mean"] != pytest.approx((7.5 + 22.0) / 2)
    # A window of 3 covers the last 3 values pushed, in runner order: runner 2's [21, 22, 23].
    assert out["custom_mean_w3"] == pytest.approx(22.0)
    assert out["custom_min"] == 7.0
    assert out["custom_max"] == 23.0
    assert out["custom_sum"] == pytest.approx(81.0)
    assert out["custom_list"] == values

    # The built-in episode stats merge the same way.
    assert out["episode_return_mean"] == pytest.approx((6 + 6 + 20 + 20 + 20) / 5)
    assert out["episode_return_min"] == 6.0
    assert out["episode_return_max"] == 20.0
    assert out["episode_len_mean"] == pytest.approx((3 + 3 + 4 + 4 + 4) / 5)
    assert out["num_episodes"] == 5
    assert out["num_env_steps_sampled"] == 2 * 3 + 3 * 4


def test_second_round_keeps_window_and_lifetime_state(runners):
    parent = MetricsLogger()
    sample(runners)
    parent.merge_and_log_n_dicts([r.get_metrics() for r in runners], key="env_runners")
    parent.reduce()
    # Round 2: runner 1 -> [9], runner 2 -> [24].
    sample(runners, counts=(1, 1))
    parent.merge_and_log_n_dicts([r.get_metrics() for r in runners], key="env_runners")
    out = parent.reduce()["env_runners"]

    everything = [7.0, 8.0, 21.0, 22.0, 23.0, 9.0, 24.0]
    assert out["custom_mean"] == pytest.approx(sum(everything) / 7)  # window 100 spans both rounds
    assert out["custom_mean_w3"] == pytest.approx((23.0 + 9.0 + 24.0) / 3)
    assert out["custom_min"] == 7.0  # windowless min/max keep their lifetime best
    assert out["custom_max"] == 24.0
    assert out["custom_sum"] == pytest.approx(sum(everything))  # a sum without clear_on_reduce is lifetime
    assert out["custom_list"] == [9.0, 24.0]  # reduce=None lists are cleared on every reduce
    assert out["num_episodes"] == 2
    assert out["num_episodes_lifetime"] == 7
