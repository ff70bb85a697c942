"""Checkpoints, as RLlib's `examples/checkpoints/checkpoint_by_custom_criteria.py` and its docs write them: save,
rebuild an Algorithm from the checkpoint alone, restore only the Learner part, save and load an RLModule."""
import os
import tempfile

import numpy as np

from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import COMPONENT_LEARNER_GROUP, DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.test_utils import add_rllib_example_script_args


def weights(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def same(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


parser = add_rllib_example_script_args(default_iters=2)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
    )
    algo = config.build_algo()
    for _ in range(args.stop_iters):
        algo.train()
    checkpoint_dir = tempfile.mkdtemp()
    path = algo.save_to_path(os.path.join(checkpoint_dir, "algo"))
    trained = weights(algo.get_module(DEFAULT_MODULE_ID))

    restored = Algorithm.from_checkpoint(path)  # class and config come from the checkpoint
    assert type(restored).__name__ == "PPO" and restored.iteration == args.stop_iters
    assert same(weights(restored.get_module()), trained)
    restored.stop()

    fresh = config.build_algo()
    assert not same(weights(fresh.get_module()), trained)
    fresh.restore_from_path(path, component=COMPONENT_LEARNER_GROUP)  # weights and optimizer only
    fresh.env_runner_group.sync_weights(from_worker_or_learner_group=fresh.learner_group)
    assert same(weights(fresh.get_module()), trained) and fresh.iteration == 0
    fresh.stop()

    module_path = algo.get_module().save_to_path(os.path.join(checkpoint_dir, "module"))
    module = RLModule.from_checkpoint(module_path)
    assert same(weights(module), trained)
    algo.stop()
    print("PORTED OK", sorted(os.listdir(path))[:3], type(module).__name__)
