"""Remote EnvRunners (Ray actors) behave like the local one: episodes, metrics, weights, foreach, filters."""
import numpy as np
import pytest
import ray

from relayrl import PPOConfig
from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter, RunningStat
from relayrl.testing.envs import CountingEnv

EPISODE_LEN = 5


def config(**env_runners):
    return (
        PPOConfig()
        .environment(CountingEnv, env_config={"episode_len": EPISODE_LEN})
        .env_runners(num_env_runners=2, num_envs_per_env_runner=2, num_cpus_per_env_runner=0.5, **env_runners)
        .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
        .debugging(seed=0)
    )


@pytest.fixture(scope="module")
def algo():
    algo = config().build_algo()
    yield algo
    algo.stop()


def module_weights(runner):
    return {k: v.detach().numpy().copy() for k, v in runner.module.state_dict().items()}


def test_remote_runners_sample_in_parallel_with_local_semantics(algo):
    group = algo.env_runner_group
    assert group.is_remote and group.num_remote_env_runners() == 2 and group.healthy_env_runner_ids() == [1, 2]
    assert group.foreach_env_runner(lambda r: (r.worker_index, r.recreated_worker)) == [(0, False), (1, False),
                                                                                        (2, False)]
    episodes, steps = algo.sample_episodes(max_env_steps=40)
    assert steps == 40 == sum(len(e) for e in episodes)
    # obs[1] is the env id: 100 * worker_index + vector_index; both remote runners' envs sampled.
    env_ids = {int(e.get_observations(0)[1]) for e in episodes}
    assert env_ids == {100, 101, 200, 201}
    # The local runner only provides spaces and inference: its envs never stepped.
    assert algo.env_runner.foreach_env(lambda env: len(env.actions_received)) == [0, 0]

    result = algo.train()
    env_results = result["env_runners"]
    assert env_results["episode_return_mean"] == sum(range(1, EPISODE_LEN + 1))
    assert env_results["episode_len_mean"] == EPISODE_LEN
    # Both runners' metrics merged, for both sampling rounds since the last result.
    assert env_results["num_episodes"] == 2 * 40 // EPISODE_LEN
    assert result["num_env_steps_sampled_lifetime"] % 40 == 0 and result["num_env_steps_sampled_lifetime"] >= 80
    assert result["num_healthy_env_runners"] == 2 and result["num_remote_env_runner_restarts"] == 0
    assert result["num_env_steps_lost"] == 0
    assert result["fault_tolerance"] == {"num_healthy_workers": 2, "num_remote_worker_restarts": 0}


def test_weights_in_sync_after_sync_weights(algo):
    algo.train()
    learner = algo.learner_group.get_weights(inference_only=True)
    learner = learner.get("default_policy", learner)
    for weights in algo.env_runner_group.foreach_env_runner(module_weights):
        assert weights.keys() <= learner.keys()
        for key, value in weights.items():
            np.testing.assert_array_equal(value, np.asarray(learner[key]))


def test_foreach_env_and_foreach_env_runner_reach_remote_runners(algo):
    group = algo.env_runner_group
    group.foreach_env(lambda env: env.set_task(3))  # curriculum-style task setting
    assert group.foreach_env(lambda env: env.get_task()) == [[3, 3], [3, 3]]
    assert group.foreach_env_runner(lambda r: r.worker_index, local_env_runner=False) == [1, 2]
    assert group.foreach_env_runner(lambda r: r.worker_index, remote_worker_ids=[2]) == [0, 2]
    refs = group.foreach_env_runner(lambda r: r.worker_index, local_env_runner=False, return_obj_refs=True)
    assert ray.get(refs) == [1, 2]
    # remote_env_runners can be called like local runners (each call waits for its actor).
    assert [r.ping() for r in group.remote_env_runners] == ["pong", "pong"]
    assert [r.worker_index for r in group.remote_env_runners] == [1, 2]
    assert group.foreach_env_runner_async(lambda r: r.worker_index * 10) == 2
    assert group.foreach_env_runner_async(lambda r: 0) == 0  # max_requests_in_flight_per_env_runner=1
    results = []
    while len(results) < 2:
        results += group.fetch_ready_async_reqs(timeout_seconds=10.0)
    assert sorted(results) == [(1, 10), (2, 20)]


def test_add_workers_starts_synced_runners():
    algo = config().env_runners(num_env_runners=1).build_algo()
    try:
        algo.train()
        group = algo.env_runner_group
        assert group.add_workers(1) == [2]
        assert group.healthy_env_runner_ids() == [1, 2] and group.num_remote_env_runners() == 2
        weights = group.foreach_env_runner(module_weights, local_env_runner=False)
        for key, value in weights[0].items():
            np.testing.assert_array_equal(weights[1][key], value)
        episodes, steps = algo.sample_episodes(max_env_steps=40)
        assert {int(e.get_observations(0)[1]) // 100 for e in episodes} == {1, 2}
    finally:
        algo.stop()


def test_sample_timeout_and_resources_come_from_the_config():
    with pytest.raises(ValueError, match="sample_timeout_s must be a positive float"):
        config(sample_timeout_s=0)
    with pytest.raises(ValueError, match="num_cpus_per_env_runner must be a float >= 0"):
        config().env_runners(num_cpus_per_env_runner=-1)


def mean_std_config():
    return config().env_runners(env_to_module_connector=lambda env, spaces=None, device=None: MeanStdFilter())


def filter_stat(runner):
    return runner.get_state()["env_to_module_connector"]["MeanStdFilter"]["stat"]


def test_mean_std_filter_statistics_merged_once_across_runners():
    algo = mean_std_config().build_algo()
    try:
        group = algo.env_runner_group
        algo.train()
        base = filter_stat(algo.env_runner)
        assert all(s == base for s in group.foreach_env_runner(filter_stat, local_env_runner=False))
        assert base["count"] > 0
        # Each runner samples more on top of the shared base; a sync must add only what they saw.
        group.foreach_env_runner(lambda r: r.sample() and None, local_env_runner=False)
        stats = group.foreach_env_runner(filter_stat, local_env_runner=False)
        assert all(s["count"] > base["count"] for s in stats)
        algo.sync_weights()
        merged = filter_stat(algo.env_runner)
        assert merged["count"] == base["count"] + sum(s["count"] - base["count"] for s in stats)
        # Same mean as one RunningStat fed with everything: base + each runner's new observations.
        total = RunningStat.from_dict(base)
        for s in stats:
            n_new = s["count"] - base["count"]
            new_mean = (np.asarray(s["mean"]) * s["count"] - np.asarray(base["mean"]) * base["count"]) / n_new
            expected = (total.mean * total.count + new_mean * n_new) / (total.count + n_new)
            total.mean, total.count = expected, total.count + n_new
        np.testing.assert_allclose(merged["mean"], total.mean, rtol=1e-9)
        assert all(s == merged for s in group.foreach_env_runner(filter_stat, local_env_runner=False))
    finally:
        algo.stop()


def test_the_remote_recording_runner_names_the_iteration_in_its_videos(tmp_path):
    import os

    from relayrl.env.wrappers.video_files import parse_video_file_name

    algo = (PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=4, video_dir=str(tmp_path))
            .env_runners(num_env_runners=2, num_envs_per_env_runner=2, num_cpus_per_env_runner=0.5)
            .training(train_batch_size=400, minibatch_size=200, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"})).build_algo()
    try:
        for _ in range(2):
            algo.train()
    finally:
        algo.stop()
    iterations = {parse_video_file_name(name)[0] for name in os.listdir(tmp_path)}
    assert iterations == {1, 2}, iterations  # told without a round trip, before the runner's next sample


def count_set_state_calls(runner):
    """From now on, inside the actor: count the runner's set_state calls."""
    original = runner.set_state
    runner.num_set_state = 0

    def counting(state):
        runner.num_set_state += 1
        return original(state)

    runner.set_state = counting


def seq_no_weights_and_count(runner):
    return runner.weights_seq_no, module_weights(runner), runner.num_set_state


def fetch_all_async(group, expected: int) -> list:
    results = []
    while len(results) < expected:
        results += [value for _, value in group.fetch_ready_async_reqs(timeout_seconds=0.1, wait_for_one=True)]
    return results


def test_a_broadcast_state_goes_with_each_runners_next_request_and_only_the_newest(algo):
    """IMPALA's weights: no message of their own per runner and update; the next request carries the newest."""
    group = algo.env_runner_group
    group.foreach_env_runner(count_set_state_calls, local_env_runner=False)
    before = group.foreach_env_runner(module_weights, local_env_runner=False)
    shifted = [{key: value + shift for key, value in before[0].items()} for shift in (1.0, 2.0)]
    group.broadcast_state_async({"rl_module": {"default_policy": shifted[0]}}, seq_no=7)
    group.broadcast_state_async({"rl_module": {"default_policy": shifted[1]}}, seq_no=8)
    # Nothing is sent until a runner's next async request.
    assert [count for *_, count in group.foreach_env_runner(seq_no_weights_and_count, local_env_runner=False)] == [0, 0]

    assert group.foreach_env_runner_async(seq_no_weights_and_count) == 2
    for seq_no, weights, count in fetch_all_async(group, 2):
        assert seq_no == 8 and count == 1  # the newest state only, taken before the request's function ran
        for key, value in weights.items():
            np.testing.assert_array_equal(value, shifted[1][key])

    group.foreach_env_runner_async(seq_no_weights_and_count)
    assert [(seq_no, count) for seq_no, _, count in fetch_all_async(group, 2)] == [(8, 1), (8, 1)]  # not again
