"""A custom training workflow as a Ray Tune function trainable.

    python examples/custom_training_workflow.py --stop-iters 20

Instead of handing Tune the PPO class, a plain function(config) builds the algorithm from the
trial's config dict and drives it with its own logic: a warm-up phase at the trial's lr, then a
fine-tuning phase at a tenth of it (switched in place with `algo.reset_config`), an evaluation
run at the end (after `--stop-iters` iterations, or earlier once `--stop-reward` or `--stop-timesteps`
is reached). Every iteration is reported with `tune.report`, with a checkpoint written by
`algo.save_to_path`; a restarted trial resumes from `tune.get_checkpoint()`.
"""
import argparse
import os
import tempfile

import ray
from ray import tune

from relayrl import PPOConfig
from relayrl.testing.example_script import add_rllib_example_script_args, should_stop


def training_workflow(config: dict) -> None:
    """The trainable: `config` is the trial's dict (PPOConfig.to_dict() with values resolved by Tune)."""
    num_iters = config.pop("num_iters")
    stop = {"env_runners/episode_return_mean": config.pop("stop_reward"),
            "num_env_steps_sampled_lifetime": config.pop("stop_timesteps")}
    warmup_iters = max(1, num_iters // 2)
    algo = PPOConfig.from_dict(config).build_algo()
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:  # a restarted trial (FailureConfig, Tuner.restore) continues
        with checkpoint.as_directory() as path:
            algo.restore_from_path(path)
    try:
        while algo.iteration < num_iters:
            if algo.iteration == warmup_iters:
                algo.reset_config({"lr": config["lr"] / 10})  # fine-tuning phase: same weights, lower lr
            result = algo.train()
            result["phase"] = "warmup" if algo.iteration <= warmup_iters else "finetune"
            done = algo.iteration == num_iters or should_stop(stop, result)
            if done:
                result["evaluation"] = algo.evaluate()  # evaluation/env_runners/episode_return_mean
            with tempfile.TemporaryDirectory() as tmp:
                path = algo.save_to_path(os.path.join(tmp, "checkpoint"))
                tune.report(result, checkpoint=tune.Checkpoint.from_directory(path))
            if done:
                break
    finally:
        algo.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=20, default_timesteps=500_000)
    parser.add_argument("--storage-path", default=os.environ.get("RELAYRL_RESULTS_DIR"),
                        help="where Tune writes results and checkpoints (default: $RELAYRL_RESULTS_DIR, else "
                             "Tune's ~/ray_results)")
    args = parser.parse_args(argv)

    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=4)
        .training(train_batch_size=1000, minibatch_size=128, num_epochs=5, lr=tune.grid_search([1e-3, 3e-4]))
        # evaluate() needs evaluation EnvRunners; an interval this large builds them but lets the
        # workflow decide when to evaluate.
        .evaluation(evaluation_interval=10_000, evaluation_duration=5)
        .debugging(seed=args.seed)
    )
    param_space = {**config.to_dict(), "num_iters": args.stop_iters, "stop_reward": args.stop_reward,
                   "stop_timesteps": args.stop_timesteps}
    ray.init(num_cpus=args.num_cpus or None, include_dashboard=False)
    try:
        results = tune.Tuner(
            training_workflow,
            param_space=param_space,
            run_config=tune.RunConfig(storage_path=args.storage_path, verbose=1,
                                      failure_config=tune.FailureConfig(max_failures=1)),
        ).fit()
        for result in results:
            metrics = result.metrics
            evaluation = metrics.get("evaluation", {}).get("env_runners", {})
            print(f"lr={result.config['lr']:.0e} iterations={metrics['training_iteration']} "
                  f"phase={metrics['phase']} return={metrics['env_runners']['episode_return_mean']:.1f} "
                  f"eval_return={evaluation.get('episode_return_mean', float('nan')):.1f}")
        return results
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
