"""A module loaded by path may take part of its weights (RLlib's strict=False) with its Learner in a Ray actor too:
the driver's permission reaches the actor (relayrl/modules/partial_module_state.py), and a whole restore there
still refuses the same partial state."""
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.checkpoints import CheckpointError
from relayrl.modules.rl_module_spec import RLModuleSpec
from relayrl.testing.value_head_modules import PolicyOnly, WithValueHead

pytestmark = pytest.mark.slow  # starts a Learner actor: ~10 s


def _config(spec, num_learners=0):
    return (PPOConfig().environment("CartPole-v1").rl_module(rl_module_spec=spec)
            .learners(num_learners=num_learners)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_a_remote_learner_takes_the_checkpointed_part_by_path_and_refuses_a_whole_restore_without_it(tmp_path):
    policy = _config(RLModuleSpec(module_class=PolicyOnly)).build_algo()
    with torch.no_grad():
        for tensor in policy.learner_group.get_module("default_policy").parameters():
            tensor.add_(0.5)
    weights = policy.learner_group.get_weights()["default_policy"]
    path = policy.save_to_path(str(tmp_path / "policy"))
    policy.stop()

    part = f"{path}/learner_group/learner/rl_module"
    algo = _config(RLModuleSpec(module_class=WithValueHead, load_state_path=part), num_learners=1).build_algo()
    try:
        assert algo.learner_group.is_remote
        loaded = algo.learner_group.get_weights()["default_policy"]
        for name, value in weights.items():
            np.testing.assert_array_equal(loaded[name], value)
        assert "_vf.weight" in loaded

        with pytest.raises(CheckpointError, match="_vf"):  # the whole algorithm lacks the head: another model
            algo.restore_from_path(path)
        np.testing.assert_array_equal(algo.learner_group.get_weights()["default_policy"]["_vf.weight"],
                                      loaded["_vf.weight"])
    finally:
        algo.stop()
