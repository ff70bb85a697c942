"""`config.api_stack(...)`, as RLlib 2.x scripts call it: the new stack is what relayrl's algorithms run; the old
stack (both False) is accepted where the config runs an old-stack Policy class and refused, naming the fix, where
it does not."""
import pytest
import torch

from relayrl import DQNConfig, PPOConfig
from relayrl.algorithms.algorithm import Algorithm
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.postprocessing import compute_advantages
from relayrl.testing.learning import train_once


def _loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


def _postprocess(policy, batch, other_agent_batches=None, episode=None):
    return compute_advantages(batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


class PolicyGradient(Algorithm):
    @classmethod
    def get_default_policy_class(cls, config):
        return build_policy_class("PG", "torch", loss_fn=_loss, postprocess_fn=_postprocess)


def test_the_new_stack_flags_are_accepted_and_kept():
    config = (PPOConfig().api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
              .environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32, num_epochs=1))
    assert config.to_dict()["enable_rl_module_and_learner"] is True
    assert PPOConfig.from_dict(config.to_dict()).enable_env_runner_and_connector_v2 is True
    assert train_once(config)["num_env_steps_sampled_lifetime"] >= 64


@pytest.mark.parametrize("flags", [(False, False), (True, False)])
def test_the_old_stack_for_a_built_in_algorithm_without_a_policy_names_the_fix(flags):
    config = DQNConfig().api_stack(*flags).environment("CartPole-v1")
    with pytest.raises(ValueError, match=r"old API stack.*DQN runs no old-stack Policy class.*drop the api_stack"):
        config.build_algo()


def test_ppo_on_the_old_stack_runs_ppo_torch_policy():
    """RLlib's old-stack PPO: PPOTorchPolicy through the Policy API, with PPO's step (standardized advantages,
    num_epochs of minibatches, the KL coefficient adapted)."""
    from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy

    config = (PPOConfig().api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
              .environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=2)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        policy = algo.get_policy()
        assert isinstance(policy, PPOTorchPolicy)
        kl_coeff = policy.kl_coeff
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 128 and policy.kl_coeff != kl_coeff
    finally:
        algo.stop()


def test_the_old_stack_runs_an_old_stack_policy_class():
    config = (PolicyAlgorithmConfig(algo_class=PolicyGradient)
              .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
              .environment("CartPole-v1").training(train_batch_size=64).debugging(seed=0))
    assert train_once(config)["num_env_steps_sampled_lifetime"] >= 64


def test_a_flag_that_is_not_a_bool_is_refused():
    with pytest.raises((TypeError, ValueError), match="enable_rl_module_and_learner"):
        PPOConfig().api_stack(enable_rl_module_and_learner="yes")
