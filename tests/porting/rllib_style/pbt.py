"""Population-based training, as RLlib's `examples/ray_tune/...` and Tune's PBT docs write it: `tune.Tuner("PPO")`
with a PopulationBasedTraining scheduler on the return, mutating lr in place (reuse_actors)."""
import os

import ray
from ray import tune
from ray.tune.schedulers import PopulationBasedTraining

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN
from ray.rllib.utils.test_utils import add_rllib_example_script_args

parser = add_rllib_example_script_args(default_reward=1e9, default_iters=4)
parser.set_defaults(num_samples=2)

if __name__ == "__main__":
    args = parser.parse_args()
    metric = f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .env_runners(num_envs_per_env_runner=1)
        .training(lr=tune.choice([1e-3, 1e-4]), train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)
    )
    pbt = PopulationBasedTraining(time_attr="training_iteration", perturbation_interval=1,
                                  hyperparam_mutations={"lr": [1e-2, 1e-3, 1e-4]})
    ray.init(num_cpus=args.num_cpus or None, include_dashboard=False)
    tuner = tune.Tuner(
        "PPO",
        param_space=config,
        tune_config=tune.TuneConfig(scheduler=pbt, metric=metric, mode="max", num_samples=args.num_samples,
                                    reuse_actors=True),
        run_config=tune.RunConfig(stop={"training_iteration": args.stop_iters, metric: args.stop_reward},
                                  storage_path=os.environ.get("RELAYRL_RESULTS_DIR") or None, verbose=0),
    )
    results = tuner.fit()
    ray.shutdown()
    assert not results.errors, results.errors
    iterations = [result.metrics["training_iteration"] for result in results]
    assert iterations == [args.stop_iters] * args.num_samples, iterations
    print("PORTED OK", iterations, sorted(result.config["lr"] for result in results))
