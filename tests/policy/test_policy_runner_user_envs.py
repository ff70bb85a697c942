"""The Policy API's runners (relayrl/policy/rollout/) with env classes written as users write them
(tests/env/user_env_classes.py), through seed 001's PG template: observations of another dtype or container
reach the rows as the space's float32 (the one-env fast path's too), Discrete / Dict / Tuple ones one-hot and
flat, the last observation of an episode (`new_obs`) included; a wrong-shape observation, gym's old
`reset(self)` and a constructor that raises give errors naming the env (docs/vector_envs.md)."""
import os
import sys

import numpy as np
import pytest

from examples.policy_gradient_custom_policy import MyAlgo
from relayrl.env.env_checks import EnvAPIError
from relayrl.policy.rollout.one_env_vector import OneEnvSyncVectorEnv

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "env"))  # (the shared env classes)
from user_env_classes import (LENGTH, ChecksItsConfig, DictObs, DiscreteObs, Float64Obs, IntObs,  # noqa: E402
                              ListObs, OldGymReset, TupleObs, TupleOfListAndInt, TwoCounters, WrongShapeLaterObs,
                              WrongShapeObs)

LAYOUTS = [(1, "SYNC"), (2, "SYNC"), (2, "ASYNC")]  # (1, "SYNC"): the one-env vector env and numpy step


def pg(env, *, num_envs=1, mode="SYNC", env_config=None, **config):
    return MyAlgo(config={"env": env, "env_config": env_config or {}, "lr": 0.01, "train_batch_size": 40, "seed": 0,
                          "model": {"fcnet_hiddens": [8]}, "num_envs_per_env_runner": num_envs,
                          "gym_env_vectorize_mode": mode, "logger_config": {"type": "none"}, **config})


def check_rows(batch, expected_obs):
    """Rows of episodes of LENGTH steps: obs t and new_obs t + 1 as expected_obs gives them (float32)."""
    t = batch["t"]
    assert len(batch) and t.max() == LENGTH - 1
    for column, offset in (("obs", 0), ("new_obs", 1)):  # (new_obs at t = LENGTH - 1: the final observation)
        assert batch[column].dtype == np.float32, column
        np.testing.assert_array_equal(batch[column], np.stack([expected_obs(i + offset) for i in t]), column)
    np.testing.assert_array_equal(batch["terminateds"], t == LENGTH - 1)


def check_trains(algo):
    result = algo.train()
    assert result["env_runners"]["episode_len_mean"] == LENGTH
    assert result["env_runners"]["episode_return_mean"] == LENGTH


@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env", [Float64Obs, ListObs, TupleObs, IntObs])
def test_observations_of_another_dtype_or_container_reach_the_rows_as_the_spaces_float32(env, num_envs, mode):
    algo = pg(env, num_envs=num_envs, mode=mode)
    try:
        runner = algo.workers.local_worker()
        assert (type(runner.env) is OneEnvSyncVectorEnv) == (num_envs == 1 and mode == "SYNC")
        check_rows(runner.sample(), lambda t: np.full(3, t, np.float32))
        check_trains(algo)
    finally:
        algo.stop()


def one_hot(t):
    return np.eye(LENGTH + 1, dtype=np.float32)[t]


@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env, env_config, expected_obs", [
    (DiscreteObs, {"numpy": True}, one_hot),
    (DiscreteObs, {"numpy": False}, one_hot),
    (DictObs, {}, lambda t: np.concatenate([np.full(3, t, np.float32), one_hot(t)])),  # (the space's order: pos, count)
    (TupleOfListAndInt, {}, lambda t: np.concatenate([np.full(2, t, np.float32), one_hot(t)])),
])
def test_discrete_dict_and_tuple_observations_reach_the_rows_one_hot_and_flat(env, env_config, expected_obs, num_envs,
                                                                                mode):
    algo = pg(env, num_envs=num_envs, mode=mode, env_config=env_config)
    try:
        check_rows(algo.workers.local_worker().sample(), expected_obs)
        check_trains(algo)
    finally:
        algo.stop()


@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env", [WrongShapeObs, WrongShapeLaterObs])
def test_an_observation_of_the_wrong_shape_names_the_env_the_space_and_the_shape(env, num_envs, mode):
    with pytest.raises(EnvAPIError) as error:
        algo = pg(env, num_envs=num_envs, mode=mode)
        try:
            algo.train()
        finally:
            algo.stop()
    message = str(error.value)
    assert env.__qualname__ in message and "Box(-10.0, 10.0, (3,), float32)" in message and "(4,)" in message


@pytest.mark.parametrize("num_envs, mode", [(1, "SYNC"), (2, "ASYNC")])
def test_gyms_old_reset_signature_is_refused_naming_the_fix(num_envs, mode):
    with pytest.raises(EnvAPIError, match=r"OldGymReset.*reset\(\) takes no 'seed' or 'options'.*"
                                          r"def reset\(self, \*, seed=None, options=None\)"):
        pg(OldGymReset, num_envs=num_envs, mode=mode)


@pytest.mark.parametrize("num_envs, mode, bad_from", [(1, "SYNC", 0), (2, "SYNC", 1), (1, "ASYNC", 0), (2, "ASYNC", 1)])
def test_an_env_rejecting_its_config_raises_its_own_error_naming_the_env(num_envs, mode, bad_from):
    with pytest.raises(ValueError, match="size must be >= 0, got size=-1") as error:
        pg(ChecksItsConfig, num_envs=num_envs, mode=mode, env_config={"size": -1, "bad_from": bad_from})
    notes = " ".join(getattr(error.value, "__notes__", []))
    assert "ChecksItsConfig" in notes and f"sub-env {bad_from} of EnvRunner worker_index=0" in notes
    assert "'size': -1" in notes


def test_a_multi_agent_env_with_float64_and_list_observations():
    algo = (MyAlgo.get_default_config().environment(TwoCounters, env_config={"size": 3})
            .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "p")
            .env_runners(num_envs_per_env_runner=2).training(train_batch_size=40, model={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        batch = algo.workers.local_worker().sample().policy_batches["p"]
        assert batch["obs"].dtype == np.float32 and batch["new_obs"].dtype == np.float32
        np.testing.assert_array_equal(batch["new_obs"][batch["terminateds"]], np.full((1, 3), LENGTH, np.float32)
                                      .repeat(int(batch["terminateds"].sum()), 0))
        assert algo.train()["env_runners"]["episode_return_mean"] == 2 * LENGTH
    finally:
        algo.stop()
