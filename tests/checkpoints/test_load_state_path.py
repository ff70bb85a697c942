"""`RLModuleSpec(load_state_path=...)`: the built algorithm's Learner and EnvRunner modules start from that checkpoint
(RLlib's train_w_bc_finetune_w_ppo.py passes a BC module's folder to a PPO module that adds a value head)."""
import numpy as np
import pytest
import torch
from torch import nn

from relayrl import PPOConfig
from relayrl.checkpoints import CheckpointError
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec
from relayrl.testing.value_head_modules import PolicyOnly, WithValueHead


def _config(spec):
    return (PPOConfig().environment("CartPole-v1").rl_module(rl_module_spec=spec)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}))


@pytest.fixture
def trained_policy(tmp_path):
    """A checkpoint of a PolicyOnly module whose weights a fresh build does not have: (path, weights)."""
    algo = _config(RLModuleSpec(module_class=PolicyOnly)).build_algo()
    with torch.no_grad():
        for tensor in algo.learner_group.get_module("default_policy").parameters():
            tensor.add_(0.5)
    weights = algo.learner_group.get_weights()["default_policy"]
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    algo.stop()
    return path, weights


@pytest.mark.parametrize("part", ["learner_group/learner/rl_module", "learner_group/learner/rl_module/default_policy"])
def test_a_module_with_a_new_head_starts_from_the_checkpointed_part(trained_policy, part):
    path, weights = trained_policy
    algo = _config(RLModuleSpec(module_class=WithValueHead, load_state_path=f"{path}/{part}")).build_algo()
    try:
        learner = algo.learner_group.get_weights()["default_policy"]
        runner = algo.env_runner.module.get_state()
        for name, value in weights.items():
            np.testing.assert_array_equal(learner[name], value)
            np.testing.assert_array_equal(runner[name], value)
        assert "_vf.weight" in learner  # the new head keeps its initial values
    finally:
        algo.stop()


def test_a_multi_module_spec_loads_the_modules_it_names(trained_policy):
    """A MultiRLModuleSpec's load_state_path with modules_to_load: only the modules named take their part."""
    from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole

    path, weights = trained_policy
    spec = MultiRLModuleSpec(rl_module_specs={"default_policy": RLModuleSpec(module_class=WithValueHead),
                                              "other": RLModuleSpec(module_class=WithValueHead)},
                             load_state_path=f"{path}/learner_group/learner/rl_module",
                             modules_to_load={"default_policy"})
    config = (_config(spec).environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .multi_agent(policies={"default_policy", "other"},
                           policy_mapping_fn=lambda agent_id, *a, **kw: "other" if agent_id else "default_policy"))
    algo = config.build_algo()
    try:
        learner = algo.learner_group.get_weights()
        np.testing.assert_array_equal(learner["default_policy"]["_pi.weight"], weights["_pi.weight"])
        assert not np.array_equal(learner["other"]["_pi.weight"], weights["_pi.weight"])
    finally:
        algo.stop()


def test_a_checkpoint_of_another_shape_is_refused_at_build(trained_policy, tmp_path):
    class Wider(WithValueHead):
        def setup(self):
            super().setup()
            self._pi = nn.Linear(4, 3)

    path, _ = trained_policy
    with pytest.raises(CheckpointError, match="_pi.weight"):
        _config(RLModuleSpec(module_class=Wider, load_state_path=path + "/learner_group/learner/rl_module")
                ).build_algo()


def test_restore_from_path_of_a_module_component_takes_part_of_the_weights_a_whole_restore_does_not(
        trained_policy, tmp_path):
    """RLlib's script then calls `restore_from_path(<module part>, component="learner_group/learner/rl_module")`:
    the part is set and the new head keeps its values. Restoring a whole algorithm whose checkpoint lacks the head's
    weights is still refused (that means another model), and leaves the algorithm as it was."""
    path, weights = trained_policy
    algo = _config(RLModuleSpec(module_class=WithValueHead)).build_algo()
    try:
        head = algo.learner_group.get_weights()["default_policy"]["_vf.weight"]
        algo.restore_from_path(f"{path}/learner_group/learner/rl_module",
                               component="learner_group/learner/rl_module")
        after = algo.learner_group.get_weights()["default_policy"]
        np.testing.assert_array_equal(after["_pi.weight"], weights["_pi.weight"])
        np.testing.assert_array_equal(after["_vf.weight"], head)
        with pytest.raises(CheckpointError, match="_vf"):
            algo.restore_from_path(path)
        np.testing.assert_array_equal(algo.learner_group.get_weights()["default_policy"]["_pi.weight"],
                                      weights["_pi.weight"])
    finally:
        algo.stop()
