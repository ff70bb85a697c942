"""A heuristic module beside a learned one (RLlib's custom_heuristic_policy example): RandomRLModule acts at random,
gets no optimizer (it has no parameters) and is left out of policies_to_train; the learned module trains."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.core.columns import Columns
from relayrl.examples.rl_modules.classes.random_rlm import RandomRLModule
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec
from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole


def config():
    return (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
            .multi_agent(policies={"learned", "random"},
                         policy_mapping_fn=lambda agent_id, *args, **kwargs: ["learned", "random"][agent_id % 2],
                         policies_to_train=["learned"])
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
                "learned": RLModuleSpec(model_config={"fcnet_hiddens": [16]}),
                "random": RLModuleSpec(module_class=RandomRLModule)}))
            .training(train_batch_size=256, minibatch_size=64, num_epochs=1)
            .debugging(seed=0))


@pytest.mark.parametrize("space", [gym.spaces.Discrete(3), gym.spaces.Box(-1.0, 1.0, (2,), np.float32)])
def test_random_module_samples_one_valid_action_per_row(space):
    module = RandomRLModule(observation_space=gym.spaces.Box(-1, 1, (4,)), action_space=space)
    actions = module.forward_exploration({Columns.OBS: torch.zeros(7, 4)})[Columns.ACTIONS]
    assert len(actions) == 7 and all(space.contains(np.asarray(a, space.dtype)) for a in actions)
    with pytest.raises(NotImplementedError, match="policies_to_train"):
        module.forward_train({Columns.OBS: torch.zeros(7, 4)})


def test_the_learned_module_trains_beside_a_random_one(tmp_path):
    algo = config().build_algo()
    try:
        learner = algo.learner_group._learner
        assert "random" not in learner._optimizers and "learned" in learner._optimizers
        before = {k: v.clone() for k, v in learner.module["learned"].state_dict().items()}
        for _ in range(2):
            result = algo.train()
        assert "total_loss" in result["learners"]["learned"] and "random" not in result["learners"]
        assert any(not torch.equal(before[k], v) for k, v in learner.module["learned"].state_dict().items())
        assert set(result["env_runners"]["module_episode_returns_mean"]) == {"learned", "random"}
        path = algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()
    restored = config().build_algo()
    try:
        restored.restore_from_path(path)
        assert restored.train()["training_iteration"] == 3
    finally:
        restored.stop()
