"""What Ray costs: start-up and per-iteration time of PPO on CartPole-v1, in-process vs 2 remote EnvRunners.

Same train batch (2048 env steps, 8 envs per runner) and a fixed number of iterations each; the
learner update is identical, so the difference is sampling in actors plus moving episodes and
weights through Ray. Prints one JSON line.

    python benchmarks/ray_overhead.py [--iters 5] [--num-cpus 2]
"""
import argparse
import json
import statistics
import time


def timed_run(num_env_runners: int, iters: int) -> dict:
    from relayrl import PPOConfig

    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=num_env_runners, num_cpus_per_env_runner=0.5 if num_env_runners else 1)
        .debugging(seed=0)
    )
    begin = time.perf_counter()
    algo = config.build_algo()
    built = time.perf_counter()
    iteration_s, sample_s = [], []
    for _ in range(iters):
        result = algo.train()
        iteration_s.append(result["time_this_iter_s"])
        sample_s.append(result["timers"]["env_runner_sampling_timer"])
    algo.stop()
    return {"build_s": round(built - begin, 3), "iteration_s_median": round(statistics.median(iteration_s), 4),
            "sampling_s_median": round(statistics.median(sample_s), 4),
            "env_steps": result["num_env_steps_sampled_lifetime"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--num-cpus", type=int, default=2)
    args = parser.parse_args()
    local = timed_run(0, args.iters)
    import ray

    begin = time.perf_counter()
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    ray_init_s = time.perf_counter() - begin
    remote = timed_run(2, args.iters)
    ray.shutdown()
    print(json.dumps({"benchmark": "ray_overhead", "iters": args.iters, "train_batch_size": 2048,
                      "ray_init_s": round(ray_init_s, 3), "local": local, "remote_2_env_runners": remote}))


if __name__ == "__main__":
    main()
