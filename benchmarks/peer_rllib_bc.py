"""The RLlib side of benchmarks/offline_time_to_bar.py: RLlib 2.60's BC trained on the parquet files relayrl recorded
(its transition rows, read with RLlib's Ray Data reader), evaluated on CartPole-v1 every iteration, until the
evaluation's mean return reaches the bar.

Runs in the peers' venv (ray[rllib]==2.60), single-threaded, on a fresh local Ray:

    OMP_NUM_THREADS=1 RAY_ADDRESS=local /work/peers/rl/bin/python benchmarks/peer_rllib_bc.py --data DIR

The settings are relayrl's BC defaults, given to RLlib explicitly: lr 1e-3, 256-row batches, the default model (two
256-unit tanh layers); `--updates-per-iteration` updates per train() (dataset_num_iters_per_learner, 10), then
evaluation: 10 greedy episodes, the mean over the last 10. Prints one RESULT json line (iterations, updates,
reached, seconds since the script started).
"""
import argparse
import json
import time

START = time.time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--stop-reward", type=float, default=400.0)
    parser.add_argument("--max-iters", type=int, default=200)
    parser.add_argument("--updates-per-iteration", type=int, default=10)
    args = parser.parse_args()

    import ray
    from ray.rllib.algorithms.bc import BCConfig

    ray.init(num_cpus=8, include_dashboard=False)  # logical CPUs: Ray Data's map actors and tasks need their own
    config = (BCConfig().environment("CartPole-v1")
              .offline_data(input_=[args.data], dataset_num_iters_per_learner=args.updates_per_iteration)
              .training(lr=1e-3, train_batch_size_per_learner=256)
              .evaluation(evaluation_interval=1, evaluation_duration=10, evaluation_num_env_runners=0,
                          evaluation_config=BCConfig.overrides(explore=False))
              .reporting(metrics_num_episodes_for_smoothing=10)
              .debugging(seed=0))
    algo = config.build()
    ret, iteration = float("-inf"), 0
    try:
        while iteration < args.max_iters:
            result = algo.train()
            iteration = result["training_iteration"]
            ret = result["evaluation"]["env_runners"]["episode_return_mean"]
            if iteration % 10 == 0:
                print(f"iter={iteration} eval_return={ret:.1f} t={time.time() - START:.0f}s", flush=True)
            if ret >= args.stop_reward:
                break
    finally:
        print("RESULT " + json.dumps({
            "peer": "rllib", "version": ray.__version__, "reached": bool(ret >= args.stop_reward),
            "iterations": iteration, "updates": iteration * args.updates_per_iteration, "return": round(float(ret), 1),
            "seconds_since_start": round(time.time() - START, 2)}), flush=True)
        algo.stop()
        ray.shutdown()


if __name__ == "__main__":
    main()
