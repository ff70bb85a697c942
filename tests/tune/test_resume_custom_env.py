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


class RestoreCountingPPO(PPO):
    """Writes a line per checkpoint restore (a PBT exploit restores the donor's checkpoint into this actor)."""
    log_path = None  # set by the test before Tune ships the class

    def load_checkpoint(self, checkpoint):
        super().load_checkpoint(checkpoint)
        with open(self.log_path, "a") as f:
            f.write(f"{self.iteration}\n")


@pytest.mark.slow
def test_pbt_exploits_on_an_env_class(ray_session, tmp_path):
    """PBT exploits go through the same restore as a trial restore: on an env class whose state is not in the
    checkpoint, the clone trains on with fresh episodes instead of stepping an env that was never reset."""
    RestoreCountingPPO.log_path = str(tmp_path / "restores.txt")
    lrs = [1e-4, 1e-3]
    config = (PPOConfig().environment(InnerGymEnv).env_runners(num_envs_per_env_runner=2)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1, lr=tune.grid_search(lrs))
              .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0))
    scheduler = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration", perturbation_interval=1, quantile_fraction=0.5,
        resample_probability=0.0, hyperparam_mutations={"lr": lrs}, synch=True)
    results = tune.Tuner(
        RestoreCountingPPO, param_space=config,
        tune_config=tune.TuneConfig(scheduler=scheduler, metric="env_runners/episode_return_mean", mode="max"),
        run_config=tune.RunConfig(storage_path=str(tmp_path / "results"), name="pbt", verbose=0,
                                  stop={"training_iteration": 2}),
    ).fit()
    assert results.num_errors == 0 and len(results) == 2
    assert (tmp_path / "restores.txt").exists(), "PBT never restored a checkpoint"
    for result in results:
        assert result.metrics["training_iteration"] == 2
        assert np.isfinite(result.metrics["env_runners"]["episode_return_mean"])
