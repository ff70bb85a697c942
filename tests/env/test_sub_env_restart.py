"""restart_failed_sub_environments: a sub-env that raises is rebuilt inside its EnvRunner."""
import pytest

from relayrl import PPOConfig
from relayrl.testing.faulty_envs import FaultyEnv, FaultyEnvError


def config(tmp_path, restart: bool):
    return (PPOConfig()
            .environment(FaultyEnv, env_config={"marker": str(tmp_path / "failed"), "fail_on_worker": 0,
                                                "fail_at_step": 5, "episode_len": 4})
            .env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=32, minibatch_size=16, num_epochs=1)
            .fault_tolerance(restart_failed_sub_environments=restart)
            .debugging(seed=0))


def test_a_raising_sub_env_is_recreated_and_sampling_goes_on(tmp_path):
    algo = config(tmp_path, restart=True).build_algo()
    try:
        first, second = algo.train(), algo.train()
        assert (tmp_path / "failed").exists()  # the env did fail once
        assert first["env_runners"]["num_env_restarts"] == 1
        assert second["num_env_steps_sampled_lifetime"] >= 64  # both iterations got their full batch
        assert second["env_runners"]["episode_len_mean"] == 4
    finally:
        algo.stop()


def test_without_the_option_the_env_error_reaches_the_caller(tmp_path):
    algo = config(tmp_path, restart=False).build_algo()
    try:
        with pytest.raises(FaultyEnvError):
            algo.train()
    finally:
        algo.stop()
