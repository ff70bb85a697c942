"""Ray Tune by algorithm name, as RLlib's example scripts do it: `--algo` picks the trainable registered with Tune
(`get_trainable_cls`), the helper runs it through `tune.Tuner` and returns Tune's ResultGrid."""
from ray import tune
from ray.tune.registry import get_trainable_cls

from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_reward=1e9, default_iters=2)

if __name__ == "__main__":
    args = parser.parse_args()
    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment("CartPole-v1")
        .framework("torch")
        .env_runners(num_envs_per_env_runner=1)
        .training(lr=tune.grid_search([0.001, 0.0003]), train_batch_size_per_learner=128, minibatch_size=64,
                  num_epochs=1)
    )
    results = run_rllib_example_script_experiment(base_config, args)
    assert type(results).__name__ == "ResultGrid" and len(results) == 2 and not results.errors
    iterations = sorted(result.metrics["training_iteration"] for result in results)
    lrs = sorted(result.config["lr"] for result in results)
    assert iterations == [args.stop_iters] * 2 and lrs == [0.0003, 0.001], (iterations, lrs)
    best = results.get_best_result(metric=f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}", mode="max")
    print("PORTED OK", iterations, lrs, best.metrics["training_iteration"])
