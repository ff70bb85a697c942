"""The old API stack's result keys: `legacy_result_keys=True` adds them (old Tune stop criteria and PBT metrics
work); without it, a stop criterion or scheduler metric naming one fails at the first result, never a run that
waits for a key no result has."""
import time

import pytest

from relayrl.metrics.legacy_result_keys import OLD_RESULT_KEYS, missing_result_key_message

tune = pytest.importorskip("ray.tune")


def _run_config(tmp_path, **kwargs):
    return tune.RunConfig(storage_path=str(tmp_path / "results"), verbose=0, **kwargs)


def test_legacy_result_keys_copy_todays_values(tiny_ppo_config):
    algo = tiny_ppo_config.reporting(legacy_result_keys=True).evaluation(
        evaluation_interval=1, evaluation_duration=2).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    env = result["env_runners"]
    assert (result["episode_reward_mean"], result["episode_reward_min"], result["episode_reward_max"]) == (
        env["episode_return_mean"], env["episode_return_min"], env["episode_return_max"])
    assert result["episode_len_mean"] == env["episode_len_mean"] == 5
    assert result["episodes_this_iter"] == env["num_episodes"] == 8
    assert result["timesteps_total"] == result["num_env_steps_sampled_lifetime"] == 40
    assert result["timesteps_this_iter"] == 40 and result["episodes_total"] == 8
    assert result["policy_reward_mean"] == {} and result["custom_metrics"] == {}
    evaluation = result["evaluation"]
    assert evaluation["episode_reward_mean"] == evaluation["env_runners"]["episode_return_mean"] == 15.0
    assert evaluation["episodes_this_iter"] == 2


def test_without_the_option_results_have_no_old_keys(tiny_ppo_config):
    algo = tiny_ppo_config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert not {"episode_reward_mean", "episodes_this_iter", "policy_reward_mean"} & set(result)


def test_messages_name_todays_key():
    flat = {"env_runners/episode_return_mean": 1.0, "evaluation/env_runners/episode_return_mean": 1.0,
            "training_iteration": 1}
    message = missing_result_key_message("episode_reward_mean", flat, what="The Tune stop criterion")
    assert "`env_runners/episode_return_mean`" in message and "legacy_result_keys=True" in message
    assert "`env_runners/episode_return_mean`, `evaluation/env_runners/episode_return_mean`" in \
        missing_result_key_message("episode_return_mean", flat, what="x")
    assert missing_result_key_message("training_iteration", flat, what="x") is None
    assert missing_result_key_message("evaluation/env_runners/foo", flat, what="x") is None  # may come later
    assert missing_result_key_message("episode_reward_mean", {"foo": 1}, what="x") is None  # not relayrl's result
    assert set(OLD_RESULT_KEYS) >= {"episode_reward_mean", "episode_reward_min", "episode_reward_max",
                                    "episode_len_mean", "episodes_this_iter", "policy_reward_mean", "timesteps_total"}


def test_old_stop_criterion_fails_at_the_first_result(ray_session, tiny_ppo_config, tmp_path):
    start = time.monotonic()
    with pytest.raises(Exception, match=r"stop criterion `episode_reward_mean` is the old API stack's result key.*"
                                        r"use `env_runners/episode_return_mean`"):
        tune.run("PPO", config=tiny_ppo_config.to_dict(), stop={"episode_reward_mean": 1e9, "training_iteration": 500},
                 storage_path=str(tmp_path / "results"), verbose=0)
    assert time.monotonic() - start < 120  # one iteration, not 500


def test_old_stop_criterion_works_with_legacy_result_keys(ray_session, tiny_ppo_config, tmp_path):
    config = tiny_ppo_config.reporting(legacy_result_keys=True)
    results = tune.Tuner("PPO", param_space=config, run_config=_run_config(
        tmp_path, stop={"episode_reward_mean": 15.0, "training_iteration": 50})).fit()
    assert results.num_errors == 0
    metrics = results[0].metrics
    assert metrics["episode_reward_mean"] == 15.0 and metrics["training_iteration"] == 1


def test_pbt_on_the_old_metric_fails_fast_naming_the_new_key(ray_session, tiny_ppo_config, tmp_path):
    from ray.tune.schedulers import PopulationBasedTraining

    pbt = PopulationBasedTraining(time_attr="training_iteration", metric="episode_reward_mean", mode="max",
                                  perturbation_interval=1, hyperparam_mutations={"lr": [1e-3, 1e-4]})
    with pytest.raises(Exception, match=r"scheduler's metric\) `episode_reward_mean` is the old API stack's result key"):
        tune.run("PPO", config=tiny_ppo_config.to_dict(), scheduler=pbt, stop={"training_iteration": 200},
                 storage_path=str(tmp_path / "results"), verbose=0)


@pytest.mark.slow
def test_pbt_on_the_old_metric_works_with_legacy_result_keys(ray_session, tiny_ppo_config, tmp_path):
    from ray.tune.schedulers import PopulationBasedTraining

    pbt = PopulationBasedTraining(time_attr="training_iteration", metric="episode_reward_mean", mode="max",
                                  perturbation_interval=1, hyperparam_mutations={"lr": [1e-3, 1e-4]})
    config = tiny_ppo_config.reporting(legacy_result_keys=True).to_dict()
    analysis = tune.run("PPO", config=config, scheduler=pbt, num_samples=2, stop={"training_iteration": 3},
                        storage_path=str(tmp_path / "results"), verbose=0, reuse_actors=True)
    assert all(trial.last_result["training_iteration"] == 3 for trial in analysis.trials)
    assert all(trial.last_result["episode_reward_mean"] == 15.0 for trial in analysis.trials)
