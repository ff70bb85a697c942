"""Evaluation parallel to training: two evaluation EnvRunners sample while PPO trains on CartPole.

With `evaluation_parallel_to_training=True` and `evaluation_duration="auto"`, each iteration's
evaluation runs in a second thread at the same time as the training step, with the weights from
before that step; every one of the `evaluation_num_env_runners=2` eval runners samples one episode
per round until training is done (at least one round), with one env each. The results show up under
result["evaluation"]["env_runners"].

The evaluation EnvRunners are Ray actors, so this script starts a local Ray instance (or uses the
cluster you connected to with `ray.init(address=...)`); training samples in this process.
`--evaluation-num-env-runners 0` evaluates on one local runner in a thread instead, without Ray.

    python examples/parallel_evaluation.py --stop-iters 10
"""
from relayrl import PPOConfig
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_reward=450.0, default_iters=20, default_timesteps=100_000)
parser.set_defaults(no_tune=True, evaluation_num_env_runners=2)  # in this process; RLlib's flags, other defaults


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=4)
        .debugging(seed=args.seed)
        .evaluation(
            evaluation_interval=max(args.evaluation_interval, 1),
            evaluation_num_env_runners=args.evaluation_num_env_runners,
            evaluation_duration="auto",
            evaluation_parallel_to_training=True,
            # One env per eval runner: "auto" samples one episode per runner per round, so further envs
            # would only play episodes that are not counted.
            evaluation_config=PPOConfig.overrides(num_envs_per_env_runner=1),
        )
    )


if __name__ == "__main__":
    args = parser.parse_args()
    run_rllib_example_script_experiment(
        build_config(args), args, keep_config=True,
        success_metric={"evaluation/env_runners/episode_return_mean": args.stop_reward})
