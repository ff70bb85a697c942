"""A Tune trial on a custom env (a gymnasium env kept in an attribute, whose state a checkpoint cannot hold) fails
after its checkpoint; Tune restores it (a fresh trainable, load_checkpoint), and it trains on with fresh episodes."""
import sys

import numpy as np
import pytest

from relayrl import PPO, PPOConfig
from relayrl.testing.envs import InnerGymEnv

tune = pytest.importorskip("ray.tune")
ray_cloudpickle = pytest.importorskip("ray.cloudpickle")
ray_cloudpickle.register_pickle_by_value(sys.modules[__name__])  # trial actors cannot import this test module


@pytest.mark.slow
def test_failed_trial_on_an_env_class_resumes_from_its_checkpoint(ray_session, tmp_path):
    marker = tmp_path / "failed_once"

    def fail_once_on_iteration_3(*, algorithm, result, **kwargs):
        if result["training_iteration"] == 3 and not marker.exists():
            marker.touch()
            raise RuntimeError("deliberate failure in iteration 3")

    config = (PPOConfig().environment(InnerGymEnv).env_runners(num_envs_per_env_runner=2)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
              .rl_module(model_config={"fcnet_hiddens": [8]})
              .callbacks(on_train_result=fail_once_on_iteration_3).debugging(seed=0))
    tuner = tune.Tuner(PPO, param_space=config.to_dict(), run_config=tune.RunConfig(
        storage_path=str(tmp_path / "results"), name="resume", verbose=0, stop={"training_iteration": 4},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1),
        failure_config=tune.FailureConfig(max_failures=1)))
    result = tuner.fit()[0]
    assert result.error is None and marker.exists()  # iteration 3 failed once, and the trial went on
    assert result.metrics["training_iteration"] == 4 and result.metrics["iterations_since_restore"] == 2
    assert result.metrics["num_env_steps_sampled_lifetime"] == 4 * 64  # the counters came back
    assert np.isfinite(result.metrics["env_runners"]["episode_return_mean"])
