"""Custom evaluation: train on a corridor of length 10, evaluate on corridors of length 20 and 30.

`custom_eval_function(algorithm, eval_env_runner_group)` replaces the built-in evaluation: it sets
the corridor length of eval EnvRunner 1 to 20 and of the others to 30 (`foreach_env_runner` plus
each runner's `foreach_env`), samples a few rounds on every eval runner, merges the runners'
metrics into `algorithm.metrics` under ("evaluation", "env_runners") and returns them reduced.
train() puts the returned dict under result["evaluation"].

The two eval EnvRunners are Ray actors (`evaluation_num_env_runners=2`), so this script starts a
local Ray instance (or uses the cluster you connected to with `ray.init(address=...)`); training
samples in this process.

    python examples/custom_evaluation.py --stop-iters 5 [--evaluation-parallel-to-training]
"""
from relayrl import PPOConfig
from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.testing.envs import CorridorEnv
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_reward=0.7, default_iters=50, default_timesteps=50_000)
parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
parser.add_argument("--corridor-length-training", type=int, default=10)
parser.add_argument("--corridor-length-eval-worker-1", type=int, default=20)
parser.add_argument("--corridor-length-eval-worker-2", type=int, default=30)
parser.add_argument("--eval-rounds", type=int, default=3, help="sample() calls per eval runner")


def make_custom_eval_function(args):
    def custom_eval_function(algorithm, eval_env_runner_group):
        def set_length(env_runner):
            length = (args.corridor_length_eval_worker_1 if env_runner.worker_index == 1
                      else args.corridor_length_eval_worker_2)
            env_runner.foreach_env(lambda env: env.set_corridor_length(length))

        eval_env_runner_group.foreach_env_runner(set_length)
        runner_metrics = []
        for _ in range(args.eval_rounds):
            runner_metrics += eval_env_runner_group.foreach_env_runner(
                lambda env_runner: (env_runner.sample(), env_runner.get_metrics())[1], local_env_runner=False)
        algorithm.metrics.merge_and_log_n_dicts(runner_metrics, key=("evaluation", "env_runners"))
        results = algorithm.metrics.reduce(key=("evaluation", "env_runners"))
        results["corridor_lengths"] = eval_env_runner_group.foreach_env(lambda env: env.corridor_length)
        print(f"  custom evaluation on corridor lengths {results['corridor_lengths']}", flush=True)
        return {"env_runners": results}

    return custom_eval_function


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment(CorridorEnv, env_config={"corridor_length": args.corridor_length_training})
        .env_runners(num_envs_per_env_runner=4)
        .training(train_batch_size=512, minibatch_size=128, num_epochs=4)
        .debugging(seed=args.seed)
        .evaluation(
            custom_evaluation_function=make_custom_eval_function(args),
            evaluation_num_env_runners=2,
            evaluation_interval=1,
            evaluation_duration="auto" if args.evaluation_parallel_to_training else 10,
            evaluation_parallel_to_training=args.evaluation_parallel_to_training,
            evaluation_config=AlgorithmConfig.overrides(env_config={"corridor_length": 20},
                                                        metrics_num_episodes_for_smoothing=5),
        )
    )


if __name__ == "__main__":
    args = parser.parse_args()
    run_rllib_example_script_experiment(
        build_config(args), args,
        success_metric={"evaluation/env_runners/episode_return_mean": args.stop_reward})
