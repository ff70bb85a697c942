"""BC under config.multi_agent(policies={"main"}): single-agent rows train the one module "main" (fast path and
episode path alike), evaluated in a multi-agent env against an old-stack RandomPolicy, whose per-policy returns
are reported as RLlib's hybrid stack did (`evaluation/env_runners/policy_reward_mean/<policy>`); checkpoints."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import BCConfig, MARWILConfig
from relayrl.core.policy_spec import PolicySpec
from relayrl.examples._old_api_stack.policy.random_policy import RandomPolicy
from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole
from relayrl.modules.policy_rl_module import PolicyRLModule
from relayrl.offline.prelearner import OfflinePreLearner

CARTPOLE = gym.make("CartPole-v1")


class EpisodePath(OfflinePreLearner):
    """A subclass takes the episode path (the Learner pipeline builds the batch from one-step episodes)."""


def _config(rows, config_class=BCConfig, **offline):
    return (config_class().environment(observation_space=CARTPOLE.observation_space,
                                       action_space=CARTPOLE.action_space)
            .offline_data(input_=rows, dataset_num_iters_per_learner=2, **offline)
            .multi_agent(policies={"main"}, policy_mapping_fn=lambda *a, **kw: "main")
            .training(train_batch_size=32).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}))


def _main_weights(algo):
    return {k: torch.as_tensor(v).clone() for k, v in algo.learner_group.get_weights()["main"].items()}


@pytest.mark.parametrize("prelearner", [None, EpisodePath])
@pytest.mark.parametrize("config_class", [BCConfig, MARWILConfig])
def test_single_agent_rows_train_the_one_module(cartpole_rows, prelearner, config_class):
    algo = _config(cartpole_rows, config_class, prelearner_class=prelearner).build_algo()
    try:
        assert algo.offline_data.rows.prelearner.uses_fast_path == (prelearner is None)
        before = _main_weights(algo)
        result = algo.train()
        assert set(algo.learner_group.get_weights()) == {"main"}
        assert np.isfinite(result["learners"]["main"]["policy_loss"])
        assert result["num_env_steps_trained_lifetime"] == 64
        assert any(not torch.equal(before[k], v) for k, v in _main_weights(algo).items())
    finally:
        algo.stop()


def test_evaluation_in_a_multi_agent_env_against_a_random_policy(cartpole_rows, tmp_path):
    config = _config(cartpole_rows).evaluation(
        evaluation_interval=1, evaluation_duration=2, evaluation_num_env_runners=0,
        evaluation_config=BCConfig.overrides(
            input_="sampler", explore=False, env=MultiAgentCartPole, env_config={"num_agents": 2},
            policies={"main": PolicySpec(), "random": PolicySpec(policy_class=RandomPolicy)},
            policy_mapping_fn=lambda aid, *a, **kw: "main" if aid == 0 else "random"))
    algo = config.build_algo()
    try:
        evaluation = algo.train()["evaluation"]["env_runners"]
        runner = algo.eval_env_runner_group.local_env_runner
        assert isinstance(runner.module["random"], PolicyRLModule)
        for name, value in runner.module["main"].state_dict().items():  # the Learner's weights, synced
            assert torch.equal(value.cpu(), torch.as_tensor(algo.learner_group.get_weights()["main"][name]))
        assert set(evaluation["policy_reward_mean"]) == {"main", "random"}
        assert evaluation["policy_reward_mean"] == evaluation["module_episode_returns_mean"]
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        weights = _main_weights(algo)
    finally:
        algo.stop()
    restored = config.build_algo()
    try:
        restored.restore_from_path(path)
        assert all(torch.equal(weights[k], v) for k, v in _main_weights(restored).items())
        assert restored.train()["num_env_steps_trained_lifetime"] == 128
    finally:
        restored.stop()


def test_a_policy_class_module_acts_with_its_policy():
    module = PolicyRLModule(observation_space=CARTPOLE.observation_space, action_space=CARTPOLE.action_space,
                            model_config={"policy_class": RandomPolicy, "policy_config": {}})
    actions = module.forward_inference({"obs": torch.zeros(50, 4)})["actions"]
    assert actions.shape == (50,) and set(actions.tolist()) == {0, 1}
    with pytest.raises(NotImplementedError, match="policies_to_train"):
        module.forward_train({"obs": torch.zeros(2, 4)})
