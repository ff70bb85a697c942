"""PBT (or reset_config) changing env_config, then restoring a checkpoint (a PBT exploit: reset_config(perturbed),
then restore(donor)): the checkpoint's envs were made with the donor's settings, and restoring their state put
those settings back (`self.episode_len = config[...]` is data a checkpoint holds), so the perturbed env_config was
silently ignored. Now such a restore starts fresh episodes on the envs made with the runner's env_config."""
import sys

import pytest

from relayrl import PPOConfig
from relayrl.testing.envs import CountingEnv


def _config(episode_len):
    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": episode_len})
            .env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=24, minibatch_size=12, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [4]}).debugging(seed=0))


def _episode_lens(algo):
    return algo.env_runner.foreach_env(lambda env: env.unwrapped.episode_len)


def test_a_restore_after_an_env_config_change_keeps_the_new_envs(tmp_path):
    donor = _config(5).build_algo()
    donor.train()  # (12 steps per env: episodes of 5 are ongoing when it saves)
    path = donor.save_to_path(str(tmp_path / "donor"))
    donor.stop()
    algo = _config(3).build_algo()
    try:
        algo.train()
        assert algo.reset_config({"env_config": {"episode_len": 9}}) is True
        algo.restore_from_path(path)
        assert algo.config.env_config == {"episode_len": 9} and _episode_lens(algo) == [9, 9]
        result = algo.train()
        assert _episode_lens(algo) == [9, 9]
        assert result["env_runners"]["episode_len_max"] == 9  # (an episode of the donor's envs would end at 5)
    finally:
        algo.stop()


def test_the_same_env_config_still_resumes_the_ongoing_episodes(tmp_path):
    algo = _config(5).build_algo()
    try:
        algo.train()
        path = algo.save_to_path(str(tmp_path / "checkpoint"))
        steps_in_episode = algo.env_runner.foreach_env(lambda env: len(env.unwrapped.episode_actions))
        algo.train()
        algo.restore_from_path(path)
        assert algo.env_runner.foreach_env(lambda env: len(env.unwrapped.episode_actions)) == steps_in_episode
        assert not algo.env_runner._needs_reset
    finally:
        algo.stop()


def _explore_to_length_4(config):
    return {**config, "env_config": {**config["env_config"], "episode_len": 4}}


@pytest.mark.slow
def test_pbt_mutating_env_config_trains_on_the_perturbed_envs(ray_session, tmp_path):
    tune = pytest.importorskip("ray.tune")
    pytest.importorskip("ray.cloudpickle").register_pickle_by_value(sys.modules[__name__])
    config = (_config(tune.grid_search([3, 7])).env_runners(num_envs_per_env_runner=1, batch_mode="complete_episodes")
              .training(train_batch_size=42, minibatch_size=21).reporting(metrics_num_episodes_for_smoothing=1))
    scheduler = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.5, synch=True,
        custom_explore_fn=_explore_to_length_4)  # (neither trial's length: the clone must run envs of 4)
    from relayrl import PPO

    results = tune.Tuner(PPO, param_space=config, tune_config=tune.TuneConfig(
        scheduler=scheduler, metric="env_runners/episode_return_mean", mode="max", reuse_actors=True),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="pbt_env_config", verbose=0,
                                  stop={"training_iteration": 5})).fit()
    assert not results.errors
    assert sorted(result.config["env_config"]["episode_len"] for result in results) == [4, 7]  # (one exploit)
    for result in results:  # the last iteration's episodes have the trial's (perturbed) length
        assert result.metrics["env_runners"]["episode_len_mean"] == result.config["env_config"]["episode_len"]


def test_a_policy_algorithm_restore_after_an_env_config_change_keeps_the_new_envs(tmp_path):
    """The same for a Policy-API algorithm (seed 001's runners keep their own sampling state), as a PBT clone
    without reused actors gets it: built with the perturbed env_config, then the donor's checkpoint restored."""
    import torch

    from relayrl.algorithms.algorithm import Algorithm
    from relayrl.policy.policy_template import build_policy_class

    def loss(policy, model, dist_class, train_batch):
        logits, _ = model.from_batch(train_batch)
        return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["rewards"])

    class PGAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return build_policy_class("PG", "torch", loss_fn=loss)

    def build(episode_len):
        return PGAlgo(config={"env": CountingEnv, "env_config": {"episode_len": episode_len},
                              "train_batch_size": 12, "seed": 0, "model": {"fcnet_hiddens": [4]}})

    donor = build(5)
    donor.train()
    path = donor.save_to_path(str(tmp_path / "donor"))
    donor.stop()
    algo = build(9)  # (a Policy algorithm refuses env_config in reset_config: Tune builds the clone anew)
    try:
        algo.restore_from_path(path)
        assert _episode_lens(algo) == [9] * len(_episode_lens(algo))
        algo.train()
        assert _episode_lens(algo) == [9] * len(_episode_lens(algo))
    finally:
        algo.stop()
