"""RLlib's nested checkpoint component paths (`learner_group/learner/rl_module`) are not relayrl's layout: restoring
one says so and names what to do instead (docs/porting.md, "Checkpoint format")."""
import pytest

from relayrl import PPOConfig
from relayrl.checkpoints.errors import CheckpointError
from relayrl.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
from relayrl.testing.envs import CountingEnv


def test_nested_component_paths_restore_that_part_and_a_typo_is_named(tmp_path):
    config = (PPOConfig().environment(CountingEnv).training(train_batch_size=32, minibatch_size=16, num_epochs=1)
              .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        nested = f"{COMPONENT_LEARNER_GROUP}/{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}"
        algo.restore_from_path(path, component=nested)  # RLlib's nested name: a part of learner_group's state
        algo.restore_from_path(f"{path}/{nested}", component=nested)
        with pytest.raises(CheckpointError, match="Did you mean|did you mean"):
            algo.restore_from_path(path, component="learner_grup")
        with pytest.raises(CheckpointError, match=r"no component `learner_group/learner/rl_modul`"):
            algo.restore_from_path(path, component=nested[:-1])
        algo.restore_from_path(path, component=COMPONENT_LEARNER_GROUP)
    finally:
        algo.stop()
