"""`tune.Tuner(PPO, param_space=config)`: search spaces in the config, RLlib's result keys, Tune's
checkpointing (frequency, at end), recovery from a failed iteration and from a killed driver."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from relayrl import PPO
from relayrl.testing.envs import CountingEnv

tune = pytest.importorskip("ray.tune")


def _run_config(tmp_path, name, **kwargs):
    return tune.RunConfig(storage_path=str(tmp_path / "results"), name=name, verbose=0, **kwargs)


def _lr_in_force(result):
    return result["learners"]["default_policy"]["default_optimizer_learning_rate"]


def test_tuner_over_a_config_with_a_grid_search(ray_session, tiny_ppo_config, tmp_path):
    config = tiny_ppo_config.training(lr=tune.grid_search([1e-3, 1e-4]))
    tuner = tune.Tuner(PPO, param_space=config, run_config=_run_config(
        tmp_path, "grid", stop={"training_iteration": 2},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1, checkpoint_at_end=True)))
    results = tuner.fit()
    assert results.num_errors == 0 and len(results) == 2
    seen_lrs = set()
    for result in results:
        metrics, lr = result.metrics, result.config["lr"]
        seen_lrs.add(lr)
        # RLlib's keys, nested as relayrl returns them.
        assert metrics["training_iteration"] == 2
        assert metrics["num_env_steps_sampled_lifetime"] == 80
        assert metrics["env_runners"]["episode_return_mean"] == 15.0  # CountingEnv: 1 + 2 + ... + 5
        assert _lr_in_force(metrics) == pytest.approx(lr)
        # One checkpoint per iteration (checkpoint_at_end adds none for the already-saved last one).
        assert len(result.best_checkpoints) == 2
        restored = PPO.from_checkpoint(result.checkpoint.path, trusted=[CountingEnv])  # (relayrl.testing: passed)
        try:
            assert restored.iteration == 2 and restored.config.lr == pytest.approx(lr)
        finally:
            restored.stop()
        # Tune's result.json: plain data, the config included.
        logged = json.loads(open(os.path.join(result.path, "result.json")).read().splitlines()[-1])
        assert logged["env_runners"]["episode_return_mean"] == 15.0
        assert logged["config"]["lr"] == pytest.approx(lr)
    assert seen_lrs == {1e-3, 1e-4}


def _fail_once_on_iteration_3(marker_path):
    def on_train_result(*, algorithm, result, **kwargs):
        if result["training_iteration"] == 3 and not os.path.exists(marker_path):
            open(marker_path, "w").close()
            raise RuntimeError("deliberate failure in iteration 3")

    return on_train_result


@pytest.mark.slow
def test_failed_trial_recovers_from_its_last_checkpoint(ray_session, tiny_ppo_config, tmp_path):
    marker = str(tmp_path / "failed_once")
    config = tiny_ppo_config.callbacks(on_train_result=_fail_once_on_iteration_3(marker))
    tuner = tune.Tuner(PPO, param_space=config.to_dict(), run_config=_run_config(
        tmp_path, "failure", stop={"training_iteration": 4},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1),
        failure_config=tune.FailureConfig(max_failures=1)))
    result = tuner.fit()[0]
    assert result.error is None
    assert os.path.exists(marker)  # iteration 3 did fail once
    metrics = result.metrics
    assert metrics["training_iteration"] == 4
    assert metrics["iterations_since_restore"] == 2  # restored at iteration 2, then ran 3 and 4
    assert metrics["num_env_steps_sampled_lifetime"] == 4 * 40  # the counters came back from the checkpoint


@pytest.mark.slow
def test_param_space_dict_with_search_spaces_in_nested_options(ray_session, tiny_ppo_config, tmp_path):
    space = tiny_ppo_config.to_dict()
    space["env_config"] = {"episode_len": tune.grid_search([3, 4])}
    space["entropy_coeff"] = tune.choice([0.01])
    results = tune.Tuner(PPO, param_space=space, run_config=_run_config(
        tmp_path, "dict", stop={"training_iteration": 1})).fit()
    assert results.num_errors == 0
    returns = sorted(r.metrics["env_runners"]["episode_return_mean"] for r in results)
    assert returns == [6.0, 10.0]
    assert [r.metrics["learners"]["default_policy"]["curr_entropy_coeff"] for r in results] == [pytest.approx(0.01)] * 2


_DRIVER = """
import ray
from ray import tune
from relayrl import PPO, PPOConfig
from relayrl.testing.envs import CountingEnv

def slow_down(*, result, **kwargs):
    import time
    time.sleep(1.0)  # gives the test time to kill this driver mid-experiment

ray.init(address="local", num_cpus=1, include_dashboard=False)
config = (PPOConfig().environment(CountingEnv, env_config={{"episode_len": 5}})
          .env_runners(num_envs_per_env_runner=2).training(train_batch_size=40, minibatch_size=20, num_epochs=1)
          .rl_module(model_config={{"fcnet_hiddens": [8]}}).callbacks(on_train_result=slow_down))
tune.Tuner(PPO, param_space=config, run_config=tune.RunConfig(
    storage_path={storage!r}, name="killed", stop={{"training_iteration": 6}}, verbose=0,
    checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1))).fit()
"""


@pytest.mark.slow
def test_tuner_restore_after_the_driver_was_killed(ray_session, tmp_path):
    storage = str(tmp_path / "results")
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(_DRIVER.format(storage=storage)))
    # Own session: the driver and the Ray processes it starts form one group we can kill.
    # TUNE_GLOBAL_CHECKPOINT_S=0: the experiment state is written at every step, so it knows the
    # trial's checkpoints when the kill comes.
    driver = subprocess.Popen([sys.executable, str(script)], start_new_session=True,
                              env={**os.environ, "TUNE_GLOBAL_CHECKPOINT_S": "0"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    experiment = os.path.join(storage, "killed")
    try:
        deadline = time.monotonic() + 300
        while not _checkpoints(experiment) or len(_checkpoints(experiment)) < 2:
            assert driver.poll() is None, "the driver ended before it wrote checkpoints"
            assert time.monotonic() < deadline, "no checkpoints within 300 s"
            time.sleep(0.5)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    assert tune.Tuner.can_restore(experiment)
    result = tune.Tuner.restore(experiment, trainable=PPO).fit()[0]
    assert result.error is None
    assert result.metrics["training_iteration"] == 6
    assert result.metrics["iterations_since_restore"] < 6  # resumed, not started over
    assert result.metrics["num_env_steps_sampled_lifetime"] == 6 * 40


def _checkpoints(experiment):
    found = []
    for root, dirs, _ in os.walk(experiment):
        found += [d for d in dirs if d.startswith("checkpoint_")]
    return found
