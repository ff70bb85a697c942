"""PPO's value-function diagnostics, reduced once per update over every minibatch it saw."""
import math

import torch

from relayrl import PPOConfig
from relayrl.algorithms.ppo.ppo_learner import _explained_variance


def test_explained_variance_ignores_masked_rows():
    targets = torch.tensor([1.0, 2.0, 3.0, 100.0])
    assert float(_explained_variance(targets, torch.tensor([1.0, 2.0, 3.0, 0.0]), torch.tensor([1, 1, 1, 0]))) == 1.0
    half_off = _explained_variance(targets, torch.tensor([2.0, 2.0, 2.0, 0.0]), torch.tensor([1, 1, 1, 0]))
    assert math.isclose(float(half_off), 0.0, abs_tol=1e-6)  # predicting the mean explains nothing


def test_train_reports_explained_variance_once_per_update():
    algo = (PPOConfig().environment("CartPole-v1")
            .training(train_batch_size=256, minibatch_size=64, num_epochs=2).debugging(seed=0).build_algo())
    try:
        stats = algo.train()["learners"]["default_policy"]
    finally:
        algo.stop()
    assert -1.0 <= stats["vf_explained_var"] <= 1.0
    assert algo.learner_group._learner._value_fits == {}  # consumed by the update
