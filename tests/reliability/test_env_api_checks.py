"""Env API mistakes raise EnvAPIError at a sub-env's first reset()/step(), naming the env, what it
returned and what gymnasium expects; what gymnasium itself lets through (e.g. float64 observations
for a float32 Box) still samples; after the first call the checks are gone (no per-step cost)."""
import sys

import gymnasium as gym
import numpy as np
import pytest
import ray

from relayrl import PPOConfig
from relayrl.distributed.env_runner_actors import EnvRunnerFailedError
from relayrl.env.env_checks import EnvAPIError
from relayrl.env.env_runner import EnvRunner
from relayrl.testing.envs import CountingEnv


class WrongShapeAtReset(CountingEnv):
    def _obs(self):
        return np.zeros(3, np.float32)  # the space says (2,)


class WrongShapeAtStep(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs[:1], reward, terminated, truncated, info


class OldGymStep(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated or truncated, info


class ResetWithoutInfo(CountingEnv):
    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0]


class StringReward(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, "1.0", terminated, truncated, info


class NoneReward(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, None, terminated, truncated, info


class ArrayReward(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, np.array([reward]), terminated, truncated, info


class TextObservation(CountingEnv):
    def _obs(self):
        return np.array(["a", "b"])


class NoneTerminated(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, None, truncated, info


class InfoNotADict(CountingEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated, truncated, "info"


def config(env, **environment):
    return (PPOConfig()
            .environment(env, **environment)
            .env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=32, minibatch_size=16, num_epochs=1)
            .debugging(seed=0))


# (env, what the message must name about the returned value, what gymnasium expects)
MISTAKES = [
    (WrongShapeAtReset, ["reset() returned an observation", "shape=(3,)", "(2,)"], "observation_space"),
    (WrongShapeAtStep, ["step() returned an observation", "shape=(1,)", "(2,)"], "observation_space"),
    (OldGymStep, ["step() returned 4 values", "(obs, reward, done, info)"],
     "(obs, reward, terminated, truncated, info)"),
    (ResetWithoutInfo, ["reset() returned array(shape=(2,)"], "(observation, info)"),
    (StringReward, ["reward '1.0' (str)"], "real number"),
    (NoneReward, ["reward None"], "real number"),
    (ArrayReward, ["reward array(shape=(1,)"], "real number"),
    (TextObservation, ["not numeric", "<U1"], "observation_space"),
    (NoneTerminated, ["terminated=None"], "expects a bool"),
    (InfoNotADict, ["info 'info' (str)"], "expects a dict"),
]


@pytest.mark.parametrize("env,returned,expected", MISTAKES, ids=[m[0].__name__ for m in MISTAKES])
def test_env_api_mistake_names_the_env_what_it_returned_and_the_fix(env, returned, expected):
    algo = config(env).build_algo()
    try:
        with pytest.raises(EnvAPIError) as info:
            algo.train()
        message = str(info.value)
        assert env.__qualname__ in message  # the env
        assert "sub-env 0 of EnvRunner worker_index=0" in message
        for part in returned:  # what it returned
            assert part in message, (part, message)
        assert expected in message  # what gymnasium expects
    finally:
        algo.stop()


def test_a_registered_env_is_named_by_its_id():
    gym.register("relayrl-test/OldGymStep-v0", entry_point=OldGymStep)
    try:
        algo = config("relayrl-test/OldGymStep-v0").build_algo()
        try:
            with pytest.raises(EnvAPIError, match=r"env 'relayrl-test/OldGymStep-v0' \(OldGymStep\)"):
                algo.train()
        finally:
            algo.stop()
    finally:
        gym.registry.pop("relayrl-test/OldGymStep-v0")


class Float64Observations(CountingEnv):  # gymnasium warns at most; the vector env casts
    def _obs(self):
        return np.array([self.t, self.env_id], np.float64)


class ListObservationsNumpyScalars(CountingEnv):
    def _obs(self):
        return [float(self.t), float(self.env_id)]

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, np.float32(reward), np.bool_(terminated), int(truncated), info


class IntObservationsInAFloatBox(CountingEnv):
    def _obs(self):
        return np.array([self.t, self.env_id], np.int64)


def patched_methods(env):
    """step/reset set on any layer of the wrapper chain (instance attributes)."""
    found = []
    while True:
        found += sorted(set(vars(env)) & {"step", "reset"})
        if not isinstance(env, gym.Wrapper):
            return found
        env = env.env


@pytest.mark.parametrize("env", [Float64Observations, ListObservationsNumpyScalars, IntObservationsInAFloatBox,
                                 "CartPole-v1"])
def test_what_gymnasium_accepts_samples_and_the_checks_leave_no_trace(env):
    runner = EnvRunner(config=config(env))
    try:
        runner.sample(num_timesteps=20)
        runner.sample(num_timesteps=20)
        # The checking methods removed themselves: step/reset are the env's own again (no per-step cost).
        assert runner.foreach_env(patched_methods) == [[], []]
    finally:
        runner.stop()


def test_disable_env_checking_skips_the_checks():
    algo = config(OldGymStep, disable_env_checking=True).build_algo()
    try:
        with pytest.raises(ValueError) as info:  # gymnasium's own unpacking error
            algo.train()
        assert not isinstance(info.value, EnvAPIError)
        assert algo.env_runner.foreach_env(patched_methods) == [[], []]
    finally:
        algo.stop()


def test_the_checks_run_in_async_vector_env_workers():
    algo = config(StringReward).env_runners(gym_env_vectorize_mode="ASYNC").build_algo()
    try:
        with pytest.raises(EnvAPIError, match=r"StringReward.*reward '1.0' \(str\)"):
            algo.train()
    finally:
        algo.stop()


def test_api_errors_are_not_retried_by_sub_env_restarts():
    algo = config(OldGymStep).fault_tolerance(restart_failed_sub_environments=True).build_algo()
    try:
        with pytest.raises(EnvAPIError, match="step\\(\\) returned 4 values"):
            algo.train()
        assert algo.env_runner._consecutive_env_failures == 0  # raised at once, no rebuild
    finally:
        algo.stop()


@pytest.fixture
def local_ray(request):
    ray.cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_remote_runner_with_an_api_error_stops_the_run_without_restarts(local_ray):
    cfg = config(ResetWithoutInfo).env_runners(num_env_runners=1, num_cpus_per_env_runner=0.5, sample_timeout_s=10.0)
    algo = cfg.fault_tolerance(delay_between_env_runner_restarts_s=0.0).build_algo()
    try:
        with pytest.raises(EnvRunnerFailedError) as info:
            algo.train()
        message = str(info.value)
        assert "worker_index=1" in message and "ResetWithoutInfo" in message and "(observation, info)" in message
        assert "A restarted runner would fail the same way" in message
        assert algo.env_runner_group.num_remote_env_runner_restarts() == 0
    finally:
        algo.stop()
