"""Off-policy updates reduce the Learner's metrics once per iteration: the mean over the updates, counts summed."""
import pytest
import torch

from relayrl.algorithms.dqn.dqn_config import DQNConfig
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.learner.minibatches import iterate_minibatches
from relayrl.testing import CorridorEnv

BATCH = 8


def _algo():
    config = (DQNConfig().environment(CorridorEnv)
              .training(train_batch_size_per_learner=BATCH, num_steps_sampled_before_learning_starts=0,
                        replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1000})
              .rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    for _ in range(40):
        episodes, _ = algo.sample_episodes(max_env_steps=1)
        algo.local_replay_buffer.add(episodes)
    return algo


def test_deferred_reduce_reports_the_mean_of_the_updates_and_sums_the_steps():
    eager, deferred = _algo(), _algo()  # same seed: the same samples and the same updates
    try:
        per_update = [eager.update_from_replay_buffer()[DEFAULT_MODULE_ID] for _ in range(3)]
        assert all(deferred.update_from_replay_buffer(reduce_metrics=False) is None for _ in range(3))
        stats = deferred.learner_group.reduce_results()[DEFAULT_MODULE_ID]
        for key in ("qf_loss", "qf_mean", "qf_max", "qf_min", "td_error_mean", "total_loss"):
            assert stats[key] == pytest.approx(sum(r[key] for r in per_update) / 3, rel=1e-5), key
        assert len({round(r["qf_mean"], 6) for r in per_update}) == 3  # the updates differ: a mean, not a copy
        assert stats["num_module_steps_trained"] == 3 * BATCH
        assert per_update[-1]["num_module_steps_trained"] == BATCH
    finally:
        eager.stop()
        deferred.stop()


def test_a_uniform_buffer_skips_fetching_td_errors_a_prioritized_one_gets_them():
    algo = _algo()
    try:
        assert algo._replay_prioritized
    finally:
        algo.stop()
    config = (DQNConfig().environment(CorridorEnv)
              .training(replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 100})
              .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(logger_config={"type": "none"}))
    uniform = config.build_algo()
    try:
        assert not uniform._replay_prioritized
    finally:
        uniform.stop()


def test_one_full_unshuffled_pass_yields_the_batch_itself():
    batch = {"m": {"obs": torch.arange(6.0)}}
    [only] = list(iterate_minibatches(batch, num_epochs=1, minibatch_size=6, shuffle=False))
    assert only is batch
    assert len(list(iterate_minibatches(batch, num_epochs=1, minibatch_size=3, shuffle=False))) == 2
