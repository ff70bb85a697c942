"""Seed 001 "Policies in Multi-Agent": a hand-written policy next to a learned one on two-agent CartPole;
only the learned one is in policies_to_train.

    python examples/multi_agent_heuristic_policy.py
"""
import numpy as np
import torch

from relayrl import PolicySpec
from relayrl.algorithms.algorithm import Algorithm
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.postprocessing import compute_advantages


class AlwaysLeft(Policy):
    def compute_actions(self, obs_batch, state_batches=None, **kwargs):
        return np.zeros(len(obs_batch), np.int64), [], {}

    def get_weights(self):
        return {}

    def set_weights(self, weights):
        pass


def loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


PGPolicy = build_policy_class("PGPolicy", "torch", loss_fn=loss, postprocess_fn=lambda p, b, o=None, e=None:
                              compute_advantages(b, 0.0, p.config["gamma"], use_gae=False, use_critic=False))


class MyAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return PGPolicy


if __name__ == "__main__":
    from relayrl.testing.example_script import add_rllib_example_script_args

    args = add_rllib_example_script_args(default_iters=20).parse_args()
    config = (PolicyAlgorithmConfig(algo_class=MyAlgo)
              .environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 2})
              .multi_agent(policies={"learned": PolicySpec(), "heuristic": PolicySpec(policy_class=AlwaysLeft)},
                           policy_mapping_fn=lambda agent_id, episode, **kw: "learned" if agent_id == 0 else "heuristic",
                           policies_to_train=["learned"])
              .training(lr=0.0004, train_batch_size=200).debugging(seed=args.seed, logger_config={"type": "none"}))
    algo = config.build_algo()
    for i in range(args.stop_iters):
        result = algo.train()
        print(i, result["num_env_steps_sampled_lifetime"], result["env_runners"]["episode_return_mean"])
    algo.stop()
