"""Seed 001's policy-gradient policy built from functions, with torch (the seed's TF loss, translated line by line).

    python examples/policy_gradient_custom_policy.py [--no-postprocess] [--stop-reward 150] [--stop-timesteps 100000]

`postprocess_advantages` turns the rewards into discounted returns (compute_advantages, use_gae=False); without
it (the seed's first attempt) the loss sees 1-step rewards and CartPole "doesn't learn so well".
"""
import torch

from relayrl.algorithms.algorithm import Algorithm
from relayrl.evaluation.postprocessing import Postprocessing, compute_advantages
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.sample_batch import SampleBatch


def postprocess_advantages(policy, sample_batch, other_agent_batches=None, episode=None):
    return compute_advantages(sample_batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def policy_gradient_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    action_dist = dist_class(logits, model)
    return -torch.mean(action_dist.logp(train_batch[SampleBatch.ACTIONS]) * train_batch[Postprocessing.ADVANTAGES])


def raw_reward_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    action_dist = dist_class(logits, model)
    return -torch.mean(action_dist.logp(train_batch[SampleBatch.ACTIONS]) * train_batch[SampleBatch.REWARDS])


MyTorchPolicy = build_policy_class("MyTorchPolicy", "torch", loss_fn=policy_gradient_loss,
                                   postprocess_fn=postprocess_advantages)
RawRewardPolicy = build_policy_class("RawRewardPolicy", "torch", loss_fn=raw_reward_loss)


class MyAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return RawRewardPolicy if config.get("policy_config", {}).get("raw_rewards") else MyTorchPolicy


def main(argv=None):
    from relayrl.testing.example_script import add_rllib_example_script_args, train_until_stop_flags

    parser = add_rllib_example_script_args(default_reward=150.0, default_iters=1000, default_timesteps=100_000)
    parser.add_argument("--no-postprocess", action="store_true", help="the seed's first attempt: raw rewards")
    args = parser.parse_args(argv)
    algo = MyAlgo(config={"env": "CartPole-v1", "lr": 0.0004, "train_batch_size": 200, "seed": args.seed or 0,
                          "policy_config": {"raw_rewards": args.no_postprocess}, "logger_config": {"type": "none"}})
    return train_until_stop_flags(algo, args)


if __name__ == "__main__":
    main()
