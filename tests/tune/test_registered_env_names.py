"""Env names registered with `relayrl.register_env` or, as RLlib code does, with Ray Tune's
`ray.tune.registry.register_env` work in this process, in EnvRunner actors and in Tune's trials (each of them a
process of its own, which finds the name in Tune's registry)."""
import pytest

from relayrl import PPO, PPOConfig, register_env
from relayrl.testing.envs import CountingEnv
from relayrl.testing.learning import train_once

tune = pytest.importorskip("ray.tune")
from ray.tune.registry import register_env as tune_register_env  # noqa: E402

EPISODE_LEN = 5
RETURN = sum(range(1, EPISODE_LEN + 1))  # CountingEnv's reward at step t is t + 1


def _config(env_name, num_env_runners=0):
    return (PPOConfig().environment(env_name, env_config={"episode_len": EPISODE_LEN})
            .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=2)
            .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0))


def test_a_name_registered_with_tune_works_in_this_process():
    tune_register_env("counting-via-tune-local", CountingEnv)
    result = train_once(_config("counting-via-tune-local"))
    assert result["env_runners"]["episode_return_mean"] == RETURN


@pytest.mark.parametrize("register", [register_env, tune_register_env], ids=["relayrl", "tune"])
def test_a_registered_name_reaches_remote_env_runners(ray_session, register):
    name = f"counting-remote-{register.__module__}"
    register(name, CountingEnv)
    result = train_once(_config(name, num_env_runners=1))
    assert result["num_env_steps_sampled_lifetime"] == 40
    assert result["env_runners"]["episode_return_mean"] == RETURN


def test_a_relayrl_registered_name_reaches_tune_trials(ray_session, tmp_path):
    register_env("counting-in-a-trial", CountingEnv)
    tuner = tune.Tuner(PPO, param_space=_config("counting-in-a-trial"), run_config=tune.RunConfig(
        storage_path=str(tmp_path), name="registered", verbose=0, stop={"training_iteration": 1}))
    results = tuner.fit()
    assert results.num_errors == 0, results.errors
    assert results[0].metrics["env_runners"]["episode_return_mean"] == RETURN


def test_an_unknown_name_names_both_registries():
    with pytest.raises(ValueError, match=r"relayrl.register_env\(name, creator\) or ray.tune.registry.register_env"):
        _config("no-such-registered-env").build_algo()
