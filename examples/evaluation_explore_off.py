"""Evaluate greedily: training samples with exploration, evaluation with `explore=False`.

`.evaluation(evaluation_interval=1, evaluation_duration=5,
evaluation_config=PPOConfig.overrides(explore=False))` runs 5 evaluation episodes after every
training iteration with the module's `forward_inference` (the argmax action for CartPole's
categorical policy) instead of `forward_exploration` (sampled actions). Each iteration prints the
training return next to the evaluation return.

    python examples/evaluation_explore_off.py --stop-iters 10
"""
from relayrl import PPOConfig
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_reward=450.0, default_iters=20, default_timesteps=100_000)
parser.set_defaults(no_tune=True, evaluation_duration=5)  # in this process; RLlib's flags, other defaults


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .debugging(seed=args.seed)
        .evaluation(
            evaluation_interval=1,
            evaluation_duration=args.evaluation_duration,
            evaluation_config=PPOConfig.overrides(explore=False),
        )
    )


if __name__ == "__main__":
    args = parser.parse_args()
    run_rllib_example_script_experiment(
        build_config(args), args, keep_config=True,
        success_metric={"evaluation/env_runners/episode_return_mean": args.stop_reward})
