"""observation_filter="MeanStdFilter" on the Policy API's runners (relayrl/policy/rollout/observation_filters.py).

`Counting` observes [t, 2t] at step t of a `length`-step episode, so every statistic is known: one sub-env
sampling n steps pushes its first reset, then per step the next observation, and at an episode's end both the
final observation and the next reset. For 20 steps of 5-step episodes: 25 observations, 0 (x5) and 1..5 (x4 each),
mean 2.4 in the first dimension.
"""
import gymnasium as gym
import numpy as np
import pytest

import examples.policy_gradient_custom_policy as pg
from relayrl.core.policy_spec import PolicySpec
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.policy.rollout.one_env_step import OneEnvNumpyStep


class Counting(gym.Env):
    def __init__(self, config=None):
        self.length = int((config or {}).get("length", 5))
        self.observation_space = gym.spaces.Box(-100.0, 100.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.t = 0

    def _obs(self):
        return np.array([self.t, 2 * self.t], np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        return self._obs(), 1.0, self.t >= self.length, False, {}


MultiCounting = make_multi_agent(lambda config: Counting(config))


def pushed_values(steps: int, length: int = 5) -> np.ndarray:
    """The first dimension of what one sub-env pushes in `steps` steps (reset, steps, final + reset at each end)."""
    values, t = [0], 0
    for _ in range(steps):
        t += 1
        values += [0, t] if t == length else [t]
        t = 0 if t == length else t
    return np.array(values, np.float64)


def pg_config(**env_runners):
    config = pg.MyAlgo.get_default_config().environment(Counting, env_config={"length": 5}).env_runners(
        **{"observation_filter": "MeanStdFilter", "rollout_fragment_length": 20, **env_runners}).training(
        train_batch_size=20)
    config.debugging(logger_config={"type": "none"}, seed=0)
    return config


def assert_stats(stats, values):
    assert stats.count == len(values)
    np.testing.assert_allclose(stats.mean, [values.mean(), 2 * values.mean()], rtol=1e-12)
    np.testing.assert_allclose(stats.std, [values.std(ddof=1), 2 * values.std(ddof=1)], rtol=1e-9)


@pytest.fixture
def algo():
    algo = pg_config().build_algo()
    yield algo
    algo.stop()


@pytest.mark.parametrize("fast", [True, False])
def test_single_agent_runner_counts_and_normalises_every_observation(algo, fast, monkeypatch):
    """Both steps filter: the one-env numpy fast path (one_env_step.py) and the general step."""
    runner = algo.env_runner_group.local_worker()
    if not fast:
        monkeypatch.setattr(OneEnvNumpyStep, "applies", staticmethod(lambda runner: False))
    assert OneEnvNumpyStep.applies(runner) == fast
    batch = runner.sample()
    assert batch.count == 20
    assert_stats(runner.filters["default_policy"].running_stats, pushed_values(20))
    # row 0: the reset alone (normalised to 0); row 1: t=1 after [0, 1]: (1 - 0.5) / sqrt(0.5)
    np.testing.assert_allclose(batch["obs"][0], [0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(batch["obs"][1], [np.sqrt(0.5), np.sqrt(0.5)], rtol=1e-5)
    np.testing.assert_array_equal(batch["new_obs"][:3], batch["obs"][1:4])  # the next row's observation
    assert np.abs(batch["obs"]).max() < 3  # the raw observations reach 4 and 8


def test_compute_single_action_filters_raw_observations_without_updating(algo):
    runner = algo.env_runner_group.local_worker()
    runner.sample()
    obs_filter = runner.filters["default_policy"]
    count = obs_filter.running_stats.count
    raw = np.array([3.0, 6.0], np.float32)
    _, _, extra = algo.compute_single_action(raw, explore=False, full_fetch=True)
    normalised = obs_filter(raw[None], update=False)[0]
    policy = algo.get_policy()
    _, _, expected = policy.compute_single_action(normalised, explore=False)
    _, _, unfiltered = policy.compute_single_action(raw, explore=False)
    np.testing.assert_allclose(extra["action_dist_inputs"], expected["action_dist_inputs"], rtol=1e-6)
    assert not np.allclose(extra["action_dist_inputs"], unfiltered["action_dist_inputs"])
    algo.compute_actions({"a": raw, "b": raw}, explore=False)
    assert obs_filter.running_stats.count == count  # update=False


def test_checkpoint_keeps_the_exact_statistics_and_old_checkpoints_load(algo, tmp_path):
    algo.train()
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    saved = algo.env_runner_group.local_worker().filters["default_policy"].running_stats
    restored = type(algo).from_checkpoint(path, trusted=[Counting, pg.MyAlgo, pg.MyTorchPolicy])
    try:
        stats = restored.env_runner_group.local_worker().filters["default_policy"].running_stats
        assert stats.count == saved.count == 25
        np.testing.assert_array_equal(stats.mean, saved.mean)
        np.testing.assert_array_equal(stats.m2, saved.m2)
        np.testing.assert_array_equal(restored.env_runner_group.local_worker().sample()["obs"],
                                      algo.env_runner_group.local_worker().sample()["obs"])
    finally:
        restored.stop()
    # a runner state from before filters existed (no "filters") restores, and the statistics go on from there
    runner = algo.env_runner_group.local_worker()
    state = runner.get_state()
    assert set(state["filters"]) == {"default_policy"}
    del state["filters"]
    fresh = pg_config().build_algo()
    try:
        fresh_runner = fresh.env_runner_group.local_worker()
        fresh_runner.set_state(state)
        assert fresh_runner.filters["default_policy"].running_stats.count == 1  # its own first reset only
    finally:
        fresh.stop()


def test_a_checkpoint_with_filters_is_refused_by_a_no_filter_algorithm(algo):
    state = algo.env_runner_group.local_worker().get_state()
    plain = pg_config().env_runners(observation_filter="NoFilter").build_algo()
    try:
        from relayrl.checkpoints.state_checks import Where

        with pytest.raises(Exception, match="observation_filter='MeanStdFilter'"):
            plain.env_runner_group.local_worker().check_state(state, Where.checkpoint("x"))
    finally:
        plain.stop()


def test_multi_agent_runner_keeps_one_filter_per_policy():
    config = pg_config().environment(MultiCounting, env_config={"num_agents": 3, "length": 5}).multi_agent(
        policies={"solo": PolicySpec(), "pair": PolicySpec()},
        policy_mapping_fn=lambda agent_id, episode, **kw: "solo" if agent_id == 0 else "pair")
    algo = config.build_algo()
    try:
        runner = algo.env_runner_group.local_worker()
        batch = runner.sample()
        values = pushed_values(20)
        assert_stats(runner.filters["solo"].running_stats, values)
        assert_stats(runner.filters["pair"].running_stats, np.concatenate([values, values]))  # two agents
        solo = batch.policy_batches["solo"]
        np.testing.assert_allclose(solo["obs"][1], [np.sqrt(0.5), np.sqrt(0.5)], rtol=1e-5)
        np.testing.assert_array_equal(solo["new_obs"][:3], solo["obs"][1:4])
    finally:
        algo.stop()


def test_evaluation_runners_use_the_training_statistics_without_updating_them():
    config = pg_config().evaluation(evaluation_interval=1, evaluation_duration=2,
                                    evaluation_duration_unit="episodes")
    algo = config.build_algo()
    try:
        algo.train()
        train_stats = algo.env_runner_group.local_worker().filters["default_policy"].running_stats
        eval_runner = algo.eval_env_runner_group.local_worker()
        eval_stats = eval_runner.filters["default_policy"].running_stats
        assert train_stats.count == 25  # evaluation's observations are not merged into training's
        assert eval_stats.count == 25  # the training statistics, not updated by two evaluation episodes
        np.testing.assert_array_equal(eval_stats.mean, train_stats.mean)
        assert algo.compute_single_action(np.zeros(2, np.float32), explore=False) in (0, 1)
    finally:
        algo.stop()


@pytest.fixture
def ray_local():
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_remote_runners_deltas_are_merged_once_and_broadcast(ray_local):
    """Two remote runners sample 10 steps each per iteration; the local runner (which does not sample) merges
    their deltas after each iteration and sends the merged statistics back; a remote evaluation runner gets them
    and does not update them (about 14 s with Ray's start, at load 9 on 2 cores)."""
    config = pg_config(num_env_runners=2, rollout_fragment_length=10, num_cpus_per_env_runner=0.5).evaluation(
        evaluation_interval=1, evaluation_num_env_runners=1, evaluation_duration=2, evaluation_duration_unit="episodes")
    algo = config.build_algo()
    try:
        group = algo.env_runner_group
        for iteration in (1, 2):
            algo.train()
            remote = pushed_values(10 * iteration)  # each remote runner's whole stream so far
            values = np.concatenate([[0.0], remote, remote])  # the local runner's own first reset
            assert_stats(group.local_worker().filters["default_policy"].running_stats, values)
            states = group.foreach_worker(lambda w: w.filter_states()["default_policy"], local_worker=False)
            assert len(states) == 2
            evaluation = algo.eval_env_runner_group.foreach_worker(lambda w: w.filter_states()["default_policy"],
                                                                   local_worker=False)
            assert len(evaluation) == 1
            for state in states + evaluation:
                assert state["count"] == len(values)
                np.testing.assert_allclose(state["mean"], [values.mean(), 2 * values.mean()], rtol=1e-12)
    finally:
        algo.stop()
