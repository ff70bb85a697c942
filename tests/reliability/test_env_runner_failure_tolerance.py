"""num_consecutive_env_runner_failures_tolerance: a runner that keeps failing ends the run with its error;
one that fails now and then keeps running.

Remote runners: the tolerance counts failed sample() calls in a row per runner (weight syncs and
other calls count neither way). Sub-envs (restart_failed_sub_environments): it counts sub-env
failures with no successful step between.

`FaultyEnv(fail_always=True)` fails every time one of its envs reaches `fail_at_step` (a rebuilt
env counts from 0 again). A remote sample() here is 20 env steps (train_batch_size 40 over two
runners), so fail_at_step=3 fails every sample() and fail_at_step=25 fails every second one.
"""
import sys
import time

import pytest
import ray

from relayrl import PPOConfig, RLlibCallback
from relayrl.distributed.env_runner_actors import EnvRunnerFailedError
from relayrl.env.env_runner import SubEnvFailuresError
from relayrl.testing.faulty_envs import FaultyEnv


@pytest.fixture
def local_ray(request):
    ray.cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def remote_config(*, fail_at_step, tolerance):
    return (
        PPOConfig()
        .environment(FaultyEnv, env_config={"episode_len": 5, "fail_always": True, "fail_on_worker": 1,
                                            "fail_at_step": fail_at_step})
        .env_runners(num_env_runners=2, num_envs_per_env_runner=1, num_cpus_per_env_runner=0.5,
                     sample_timeout_s=10.0)
        .fault_tolerance(delay_between_env_runner_restarts_s=0.0,
                         num_consecutive_env_runner_failures_tolerance=tolerance)
        .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
        .debugging(seed=0)
    )


def test_remote_runner_failing_every_sample_stops_the_run_with_its_traceback(local_ray):
    algo = remote_config(fail_at_step=3, tolerance=1).fault_tolerance(delay_between_env_runner_restarts_s=3.0)\
        .build_algo()
    group = algo.env_runner_group
    try:
        first = algo.train()  # runner 1 fails (1 in a row, tolerated); runner 2 fills the batch meanwhile
        assert first["num_healthy_env_runners"] == 1
        time.sleep(3.0)
        assert group.probe_unhealthy_env_runners() == [1]
        # Successful calls that are not sample() (a weight sync, a foreach) must not reset the count.
        group.sync_weights(from_worker_or_learner_group=algo.learner_group)
        assert group.foreach_env_runner(lambda runner: runner.worker_index, local_env_runner=False) == [1, 2]
        with pytest.raises(EnvRunnerFailedError) as info:
            algo.train()  # runner 1's second failed sample() in a row
        message = str(info.value)
        assert "worker_index=1" in message
        assert "failed 2 times in a row" in message
        assert "num_consecutive_env_runner_failures_tolerance=1" in message
        assert "FaultyEnvError" in message and "failed at step 3" in message
        assert "faulty_envs.py" in message  # the env's traceback
        assert group.num_remote_env_runner_restarts() == 1
        assert group.healthy_env_runner_ids() == [2] and group.probe_unhealthy_env_runners() == []  # given up
    finally:
        algo.stop()


@pytest.mark.slow  # four actor starts
def test_remote_runner_failing_every_other_sample_keeps_running(local_ray):
    algo = remote_config(fail_at_step=25, tolerance=1).build_algo()
    try:
        # Each new runner 1 samples once, then fails: iterations 2 and 3 each see one failure and a restart.
        results = [algo.train() for _ in range(3)]
        assert results[-1]["training_iteration"] == 3
        assert results[-1]["num_remote_env_runner_restarts"] == 2  # more failures than the tolerance, never 2 in a row
        assert results[-1]["num_healthy_env_runners"] == 2
    finally:
        algo.stop()


class CountEnvBuilds(RLlibCallback):
    builds = 0

    def on_environment_created(self, **kwargs):
        CountEnvBuilds.builds += 1


class FailsInReset(FaultyEnv):
    def reset(self, *, seed=None, options=None):
        raise RuntimeError("FailsInReset: the simulator did not start")


def sub_env_config(env, *, fail_at_step, tolerance, restart=True):
    return (
        PPOConfig()
        .environment(env, env_config={"episode_len": 4, "fail_always": True, "fail_on_worker": 0,
                                      "fail_at_step": fail_at_step})
        .env_runners(num_envs_per_env_runner=2)
        .training(train_batch_size=32, minibatch_size=16, num_epochs=1)
        .fault_tolerance(restart_failed_sub_environments=restart,
                         num_consecutive_env_runner_failures_tolerance=tolerance)
        .callbacks(CountEnvBuilds)
        .debugging(seed=0)
    )


@pytest.mark.parametrize("env,needle,raised_in", [
    (FaultyEnv, "failed at step 1", "faulty_envs.py"),                                # every step() raises
    (FailsInReset, "the simulator did not start", "test_env_runner_failure_tolerance.py"),  # every reset()
])
def test_sub_env_failing_every_time_stops_the_run_with_its_traceback(env, needle, raised_in):
    CountEnvBuilds.builds = 0
    algo = sub_env_config(env, fail_at_step=1, tolerance=3).build_algo()
    try:
        CountEnvBuilds.builds = 0
        with pytest.raises(SubEnvFailuresError) as info:
            algo.train()
        message = str(info.value)
        assert "worker_index=0" in message
        assert "failed 4 times in a row" in message
        assert "num_consecutive_env_runner_failures_tolerance=3" in message
        assert needle in message
        assert f'{raised_in}", line' in message  # the env's traceback
        assert CountEnvBuilds.builds == 3  # 3 failures tolerated (each rebuilt the envs), the 4th not
    finally:
        algo.stop()


def test_sub_env_failing_now_and_then_keeps_running():
    algo = sub_env_config(FaultyEnv, fail_at_step=3, tolerance=1).build_algo()
    try:
        results = [algo.train() for _ in range(2)]
        # each rebuilt env fails at its 3rd step, after two good steps: many failures, never 2 in a row
        assert sum(r["env_runners"]["num_env_restarts"] for r in results) > 1
        assert results[-1]["num_env_steps_sampled_lifetime"] >= 64
    finally:
        algo.stop()
