"""Population-based training (Ray Tune's PBT) of PPO on CartPole-v1, mutating lr and entropy_coeff.

    python examples/pbt_cartpole.py --num-samples 4 --stop-reward 450 --stop-iters 100

`tune.Tuner(PPO, ...)` takes relayrl's PPO class as it is: once ray.tune is imported, every relayrl
Algorithm is a `ray.tune.Trainable`. Every `--perturbation-interval` iterations PBT lets the bottom
quarter of the trials clone the weights of the top quarter and go on with perturbed
hyper-parameters. With `reuse_actors=True` that happens in place: Tune calls `PPO.reset_config`,
which puts the new lr into the optimisers and the new entropy_coeff into the loss -- no rebuild.
"""
import argparse
import os

import ray
from ray import tune

from relayrl import PPO, PPOConfig
from relayrl.testing.example_script import add_rllib_example_script_args


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=100, default_timesteps=500_000)
    parser.set_defaults(num_samples=4)  # the population size (trials)
    parser.add_argument("--perturbation-interval", type=int, default=4, help="iterations between exploits")
    parser.add_argument("--storage-path", default=os.environ.get("RELAYRL_RESULTS_DIR"),
                        help="where Tune writes results and checkpoints (default: $RELAYRL_RESULTS_DIR, else "
                             "Tune's ~/ray_results)")
    args = parser.parse_args(argv)

    # Search spaces go straight into the builder calls; Tune samples them per trial.
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=4)
        .training(train_batch_size=1000, minibatch_size=128, num_epochs=5,
                  lr=tune.loguniform(1e-4, 3e-3), entropy_coeff=tune.uniform(0.0, 0.02))
        .debugging(seed=args.seed)
    )
    pbt = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=args.perturbation_interval,
        hyperparam_mutations={"lr": tune.loguniform(1e-4, 3e-3), "entropy_coeff": tune.uniform(0.0, 0.02)},
    )
    ray.init(num_cpus=args.num_cpus or None, include_dashboard=False)
    try:
        tuner = tune.Tuner(
            PPO,
            param_space=config,
            tune_config=tune.TuneConfig(scheduler=pbt, metric="env_runners/episode_return_mean", mode="max",
                                        num_samples=args.num_samples, reuse_actors=True),
            run_config=tune.RunConfig(
                storage_path=args.storage_path,
                stop={"env_runners/episode_return_mean": args.stop_reward,
                      "training_iteration": args.stop_iters,
                      "num_env_steps_sampled_lifetime": args.stop_timesteps},
                checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True),
                verbose=1,
            ),
        )
        results = tuner.fit()
        best = results.get_best_result()
        print(f"best return={best.metrics['env_runners']['episode_return_mean']:.1f} "
              f"lr={best.config['lr']:.2e} entropy_coeff={best.config['entropy_coeff']:.4f} "
              f"checkpoint={best.checkpoint.path if best.checkpoint else None}")
        return results
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
