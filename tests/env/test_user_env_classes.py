"""Env classes written as users write them (valid gymnasium envs that relayrl's own test envs are not), through
PPO, DQN and SAC, with 1 and 2 sub-envs per runner in SYNC and ASYNC: counts, episode contents and returns, and
clear errors naming the env where an env breaks the API (docs/vector_envs.md, "Env classes you write")."""
import os
import sys
import time

import gymnasium as gym
import numpy as np
import pytest

import user_env_classes
from relayrl import DQNConfig, PPOConfig, SACConfig
from relayrl.env.env_checks import EnvAPIError
from user_env_classes import (LENGTH, CartPoleWithBonus, ChecksItsConfig, CountingEnv, DiscreteObs, Float32Reward,
                              Float64Obs, IntObs, IntReward, ListObs, NumpyBoolFlags, OldGymReset, RendersFrames,
                              SlowToMake, TruncatesItself, TupleObs, TwoCounters, WrongShapeLaterObs, WrongShapeObs,
                              ZeroDimArrayReward)

LAYOUTS = [(1, "SYNC"), (2, "SYNC"), (1, "ASYNC"), (2, "ASYNC")]


# -- helpers ---------------------------------------------------------------------------------------------------------
def build(env, *, algo="PPO", num_envs=1, mode="SYNC", env_config=None, **runners):
    if algo == "PPO":
        config = PPOConfig().training(train_batch_size=40, minibatch_size=20, num_epochs=1)
    else:
        config = {"DQN": DQNConfig, "SAC": SACConfig}[algo]().training(
            train_batch_size_per_learner=8, num_steps_sampled_before_learning_starts=8).reporting(
            min_sample_timesteps_per_iteration=20)
    return (config.environment(env, env_config=env_config or {})
            .env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode, **runners)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())


def sampled_episodes(algo, steps=20):
    return algo.env_runner.sample(num_timesteps=steps)


def check_counting_episodes(episodes, expected_obs):
    """Each episode's observations are the env's counts as expected_obs gives them, rewards 1 (float32)."""
    assert episodes
    for episode in episodes:
        n = len(episode)
        observations = np.asarray(episode.get_observations())
        np.testing.assert_array_equal(observations, np.stack([expected_obs(t) for t in range(n + 1)]))
        rewards = np.asarray(episode.get_rewards())
        np.testing.assert_array_equal(rewards, np.ones(n))
        assert rewards.dtype.kind == "f"
        assert episode.is_terminated == (n == LENGTH) and not episode.is_truncated


def check_trains(algo, episode_len=LENGTH, episode_return=LENGTH):
    result = algo.train()
    assert result["num_env_steps_sampled_lifetime"] >= 20
    assert result["env_runners"]["episode_len_mean"] == episode_len
    assert result["env_runners"]["episode_return_mean"] == episode_return
    return result


# -- 1 --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env", [Float64Obs, ListObs, TupleObs, IntObs])
def test_observations_of_another_dtype_or_container_arrive_as_the_spaces_float32(env, num_envs, mode):
    algo = build(env, num_envs=num_envs, mode=mode)
    try:
        episodes = sampled_episodes(algo)
        check_counting_episodes(episodes, lambda t: np.full(3, t, np.float32))
        assert all(np.asarray(e.get_observations()).dtype == np.float32 for e in episodes)
        check_trains(algo)
    finally:
        algo.stop()


@pytest.mark.parametrize("numpy_scalar", [True, False])
@pytest.mark.parametrize("num_envs, mode", [(2, "SYNC"), (2, "ASYNC")])
def test_discrete_observations_as_numpy_scalars_or_ints_train_dqn(numpy_scalar, num_envs, mode):
    from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations

    algo = build(DiscreteObs, algo="DQN", num_envs=num_envs, mode=mode, env_config={"numpy": numpy_scalar},
                 env_to_module_connector=lambda env, spaces, device: FlattenObservations())
    try:
        # FlattenObservations writes the one-hot observations back into the episodes (as RLlib's)
        check_counting_episodes(sampled_episodes(algo), lambda t: np.eye(LENGTH + 1, dtype=np.float32)[t])
        check_trains(algo)
    finally:
        algo.stop()


@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env", [WrongShapeObs, WrongShapeLaterObs])
def test_an_observation_of_the_wrong_shape_names_the_env_the_space_and_the_shape(env, num_envs, mode):
    with pytest.raises(EnvAPIError) as error:
        algo = build(env, num_envs=num_envs, mode=mode)
        try:
            algo.train()
        finally:
            algo.stop()
    message = str(error.value)
    assert env.__qualname__ in message and "Box(-10.0, 10.0, (3,), float32)" in message and "(4,)" in message


# -- 2 --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env", [Float32Reward, ZeroDimArrayReward, IntReward, NumpyBoolFlags])
def test_numpy_and_int_rewards_and_numpy_bool_flags(env, num_envs, mode):
    algo = build(env, num_envs=num_envs, mode=mode)
    try:
        check_counting_episodes(sampled_episodes(algo), lambda t: np.full(3, t, np.float32))
        check_trains(algo)
    finally:
        algo.stop()


def test_numpy_rewards_and_int_observations_through_sac():
    class BoxActions(IntObs, Float32Reward):
        def __init__(self, env_config=None):
            super().__init__(env_config)
            self.action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    for num_envs, mode in [(1, "SYNC"), (2, "ASYNC")]:
        algo = build(BoxActions, algo="SAC", num_envs=num_envs, mode=mode)
        try:
            check_counting_episodes(sampled_episodes(algo), lambda t: np.full(3, t, np.float32))
            check_trains(algo)
        finally:
            algo.stop()


# -- 3 --------------------------------------------------------------------------------------------------------------
def context_of(env):
    ctx = env.env_config
    return type(ctx).__name__, dict(ctx), ctx.worker_index, ctx.vector_index, ctx.num_workers, env.reset_seeds[0]


@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_each_sub_env_gets_its_own_env_context_and_seed(mode):
    algo = build(CountingEnv, num_envs=2, mode=mode, env_config={"size": 3})
    try:
        sampled_episodes(algo)
        contexts = algo.env_runner.foreach_env(context_of)
    finally:
        algo.stop()
    # debugging(seed=0): the local runner's sub-envs are seeded 0 and 1 (their first reset only)
    assert contexts == [("EnvContext", {"size": 3}, 0, 0, 0, 0), ("EnvContext", {"size": 3}, 0, 1, 0, 1)]


# -- 4 --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_an_env_reading_render_mode_without_render_fps_records_videos(tmp_path, mode):
    algo = (PPOConfig().environment(RendersFrames, record_video_every_n_episodes=2)
            .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode=mode)
            .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "json", "logdir": str(tmp_path)}).build_algo())
    try:
        check_trains(algo)
        videos_dir = os.path.join(algo.logdir, "videos")
    finally:
        algo.stop()
    videos = [f for f in os.listdir(videos_dir) if f.endswith(".mp4")]
    assert videos and all(os.path.getsize(os.path.join(videos_dir, f)) > 0 for f in videos)


@pytest.mark.parametrize("num_envs, mode", [(1, "SYNC"), (2, "ASYNC")])
def test_gyms_old_reset_signature_is_refused_naming_the_fix(num_envs, mode):
    with pytest.raises(EnvAPIError, match=r"OldGymReset.*reset\(\) takes no 'seed' or 'options'.*"
                                          r"def reset\(self, \*, seed=None, options=None\)"):
        build(OldGymReset, num_envs=num_envs, mode=mode)


# -- 5 --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env, length", [("relayrl_test/NeverEnds-v0", 7), (TruncatesItself, LENGTH)])
def test_truncated_episodes_have_the_limits_length_and_the_truncated_flag(env, length, num_envs, mode):
    algo = build(env, num_envs=num_envs, mode=mode)
    try:
        episodes = sampled_episodes(algo, steps=4 * length)
        done = [e for e in episodes if e.is_done]
        assert len(done) >= 2 and all(len(e) == length and e.is_truncated and not e.is_terminated for e in done)
        assert all(len(e) < length and not e.is_done for e in episodes if not e.is_done)  # the cut ongoing chunks
        check_trains(algo, episode_len=length, episode_return=length)
    finally:
        algo.stop()


# -- 6 --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_envs, mode", [(1, "SYNC"), (2, "ASYNC")])
def test_a_gymnasium_wrapper_subclass_that_makes_its_env(num_envs, mode):
    algo = build(CartPoleWithBonus, num_envs=num_envs, mode=mode, env_config={"max_steps": 4})
    try:
        episodes = [e for e in sampled_episodes(algo, steps=40) if e.is_done]
        assert episodes and all(len(e) <= 4 and e.get_return() == 2.0 * len(e) for e in episodes)
        assert any(e.is_truncated for e in episodes)  # the config's TimeLimit reached the wrapped CartPole
    finally:
        algo.stop()


@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_a_slow_constructor_is_waited_for(mode):
    algo = build(SlowToMake, num_envs=2, mode=mode)
    try:
        check_counting_episodes(sampled_episodes(algo), lambda t: np.full(3, t, np.float32))
        check_trains(algo)
    finally:
        algo.stop()


@pytest.mark.parametrize("num_envs, mode, bad_from", [(1, "SYNC", 0), (2, "SYNC", 1), (1, "ASYNC", 0), (2, "ASYNC", 1)])
def test_an_env_rejecting_its_config_raises_its_own_error_naming_the_env(num_envs, mode, bad_from):
    # bad_from=1: only sub-env 1 fails; in ASYNC it fails in a worker process, whose death alone names nothing
    with pytest.raises(ValueError, match="size must be >= 0, got size=-1") as error:
        build(ChecksItsConfig, num_envs=num_envs, mode=mode, env_config={"size": -1, "bad_from": bad_from})
    notes = " ".join(getattr(error.value, "__notes__", []))
    assert "ChecksItsConfig" in notes and f"sub-env {bad_from} of EnvRunner worker_index=0" in notes
    assert "'size': -1" in notes


# -- multi-agent -----------------------------------------------------------------------------------------------------
def test_a_multi_agent_env_with_numpy_values_and_its_env_context():
    algo = (PPOConfig().environment(TwoCounters, env_config={"size": 3})
            .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "p")
            .env_runners(num_envs_per_env_runner=2).training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        done = [e for e in algo.env_runner.sample(num_timesteps=20) if e.is_done]
        assert done and all(len(e) == LENGTH and e.get_return() == 2 * LENGTH for e in done)
        for episode in done:  # the env's values as it gave them (as RLlib's MultiAgentEpisode keeps them)
            for agent in ("a", "b"):
                np.testing.assert_array_equal(episode.get_observations()[agent],
                                              np.repeat(np.arange(LENGTH + 1.0)[:, None], 3, axis=1))
        assert algo.env_runner.foreach_env(context_of) == [("EnvContext", {"size": 3}, 0, 0, 0, 0),
                                                           ("EnvContext", {"size": 3}, 0, 1, 0, 1)]
        result = algo.train()
        assert result["env_runners"]["episode_return_mean"] == 2 * LENGTH
    finally:
        algo.stop()
    with pytest.raises(ValueError, match="size must be >= 0") as error:
        algo = (PPOConfig().environment(TwoCounters, env_config={"size": -1})
                .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "p")
                .env_runners(num_envs_per_env_runner=2).build_algo())
    assert "TwoCounters for sub-env 1 of EnvRunner worker_index=0" in " ".join(error.value.__notes__)


# -- remote runners (Ray) --------------------------------------------------------------------------------------------
@pytest.fixture
def ray_instance():
    ray = pytest.importorskip("ray")
    for module in (sys.modules[__name__], user_env_classes):  # (Ray's workers cannot import the test files)
        ray.cloudpickle.register_pickle_by_value(module)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow  # 11 s at load 3, 27 s at load 6: a local Ray instance, three algorithms, two remote runners
def test_remote_runners_env_contexts_and_errors(ray_instance):
    algo = build(CountingEnv, num_envs=2, num_env_runners=2)
    try:
        result = check_trains(algo)
        contexts = algo.env_runner_group.foreach_env_runner(lambda runner: runner.foreach_env(context_of),
                                                            local_env_runner=False)
    finally:
        algo.stop()
    assert result["num_env_steps_sampled_lifetime"] >= 40
    # worker_index 1 and 2 of num_workers=2, each sub-env its vector_index; seeds: seed + 1000 * worker_index + i
    assert sorted(c[2:] for runner in contexts for c in runner) == [(1, 0, 2, 1000), (1, 1, 2, 1001),
                                                                      (2, 0, 2, 2000), (2, 1, 2, 2001)]
    # an observation of the wrong shape after the first steps, in a remote runner's ASYNC sub-env
    algo = build(WrongShapeLaterObs, num_envs=2, mode="ASYNC", num_env_runners=2)
    try:
        with pytest.raises(Exception, match=r"WrongShapeLaterObs.*Box\(-10.0, 10.0, \(3,\), float32\)") as error:
            algo.train()
    finally:
        algo.stop()
    assert "(4,)" in str(error.value)
    # a constructor rejecting its env_config in the remote runners' ASYNC worker processes: the env's error, no hang
    started = time.monotonic()
    with pytest.raises(Exception, match="size must be >= 0, got size=-1") as error:
        build(ChecksItsConfig, num_envs=2, mode="ASYNC", num_env_runners=2,
              env_config={"size": -1, "bad_from": 1, "bad_on_worker": 1}).stop()
    assert "ChecksItsConfig" in str(error.value) and time.monotonic() - started < 60
