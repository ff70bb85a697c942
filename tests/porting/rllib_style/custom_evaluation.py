"""A custom evaluation function, as RLlib's `examples/evaluation/custom_evaluation.py` writes it: evaluate on
longer corridors than training uses and report the merged EnvRunner metrics."""
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.examples.envs.classes.simple_corridor import SimpleCorridor
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN, EVALUATION_RESULTS
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_iters=2, default_reward=1e9)
parser.add_argument("--corridor-length-eval", type=int, default=7)
parser.add_argument("--num-eval-runs", type=int, default=2)


def custom_eval_function(algorithm, eval_workers):
    eval_workers.foreach_env_runner(
        func=lambda worker: worker.foreach_env(lambda env: env.set_corridor_length(args.corridor_length_eval)))
    env_runner_metrics = []
    sampled_episodes = []
    for _ in range(args.num_eval_runs):
        episodes_and_metrics = eval_workers.foreach_env_runner(func=lambda worker: (worker.sample(), worker.get_metrics()))
        sampled_episodes.extend(eps for episodes, _ in episodes_and_metrics for eps in episodes)
        env_runner_metrics.extend(metrics for _, metrics in episodes_and_metrics)
    algorithm.metrics.aggregate(env_runner_metrics, key=(EVALUATION_RESULTS, ENV_RUNNER_RESULTS))
    eval_results = algorithm.metrics.peek((EVALUATION_RESULTS, ENV_RUNNER_RESULTS))
    env_steps = sum(eps.env_steps() for eps in sampled_episodes)
    return eval_results, env_steps, env_steps


if __name__ == "__main__":
    args = parser.parse_args()
    base_config = (
        PPOConfig()
        .environment(SimpleCorridor, env_config={"corridor_length": 3})
        .framework("torch")
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        .evaluation(
            evaluation_num_env_runners=0,
            evaluation_interval=1,
            evaluation_duration=2,
            custom_evaluation_function=custom_eval_function,
            evaluation_config=AlgorithmConfig.overrides(explore=False),
        )
    )
    result = run_rllib_example_script_experiment(base_config, args)
    evaluation = result[EVALUATION_RESULTS][ENV_RUNNER_RESULTS]
    # Episodes on the longer corridor take at least its length in steps (training's take 3 or more).
    assert evaluation["episode_len_min"] >= args.corridor_length_eval, evaluation
    assert result["env_runners"]["episode_len_min"] < args.corridor_length_eval
    print("PORTED OK", evaluation["episode_len_min"], round(evaluation[EPISODE_RETURN_MEAN], 3))
