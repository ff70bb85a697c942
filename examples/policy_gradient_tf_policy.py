"""Seed 001's policy-gradient policy in TensorFlow, as the seed writes it (imports changed): `pip install "relayrl[tf]"`.

    python examples/policy_gradient_tf_policy.py [--no-postprocess] [--eager] [--stop-reward 150] [--stop-timesteps 100000]

The postprocessor passes use_critic=False (the seed leaves it at True, which needs a value column: RLlib asserts the
same); `--no-postprocess` is the seed's first attempt (raw 1-step rewards). Traced with `eager_tracing=True` unless
`--eager`. examples/policy_gradient_custom_policy.py is the same policy with torch.
"""
import tensorflow as tf

from relayrl.algorithms.algorithm import Algorithm
from relayrl.evaluation.postprocessing import Postprocessing, compute_advantages
from relayrl.policy.sample_batch import SampleBatch
from relayrl.policy.tf_policy_template import build_tf_policy


def postprocess_advantages(policy, sample_batch, other_agent_batches=None, episode=None):
    return compute_advantages(sample_batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def policy_gradient_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    action_dist = dist_class(logits, model)
    return -tf.reduce_mean(action_dist.logp(train_batch[SampleBatch.ACTIONS]) * train_batch[Postprocessing.ADVANTAGES])


def raw_reward_loss(policy, model, dist_class, train_batch):
    actions = train_batch[SampleBatch.ACTIONS]
    rewards = train_batch[SampleBatch.REWARDS]
    logits, _ = model.from_batch(train_batch)
    action_dist = dist_class(logits, model)
    return -tf.reduce_mean(action_dist.logp(actions) * rewards)


MyTFPolicy = build_tf_policy(name="MyTFPolicy", loss_fn=policy_gradient_loss, postprocess_fn=postprocess_advantages)
RawRewardTFPolicy = build_tf_policy(name="RawRewardTFPolicy", loss_fn=raw_reward_loss)


class MyAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return RawRewardTFPolicy if config.get("policy_config", {}).get("raw_rewards") else MyTFPolicy


def main(argv=None):
    from relayrl.testing.example_script import add_rllib_example_script_args, train_until_stop_flags

    parser = add_rllib_example_script_args(default_reward=150.0, default_iters=1000, default_timesteps=100_000)
    parser.add_argument("--no-postprocess", action="store_true", help="the seed's first attempt: raw rewards")
    parser.add_argument("--eager", action="store_true", help="no eager_tracing (every step runs op by op)")
    args = parser.parse_args(argv)
    algo = MyAlgo(config={"env": "CartPole-v1", "framework": "tf2", "eager_tracing": not args.eager, "lr": 0.0004,
                          "train_batch_size": 200, "seed": args.seed or 0, "logger_config": {"type": "none"},
                          "policy_config": {"raw_rewards": args.no_postprocess}})
    return train_until_stop_flags(algo, args)


if __name__ == "__main__":
    main()
