"""Benchmark: IMPALA or APPO on CartPole-v1 to a mean return of 450 (budgets: IMPALA 2M env steps, APPO 1M,
RLlib's bars), embedded or with remote EnvRunners.

    .venv/bin/python benchmarks/impala_cartpole.py [--algo IMPALA|APPO] [--runners 0|2] [--seed 0]

relayrl's defaults (docs/impala.md) with `--runners` remote EnvRunners at 1/runners CPU each, like the
peers' anchors (/work/shared/anchors/rllib_impala_cartpole.py 2, rllib_appo_cartpole.py 2). Prints one
`RESULT {json}` line: env steps, wall seconds (from `python` start), env steps per second.
"""
import argparse
import pathlib
import time

from time_to_bar import report, train_to_bar

T0 = time.perf_counter()
BUDGET = {"IMPALA": 2_000_000, "APPO": 1_000_000}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--algo", choices=sorted(BUDGET), default="IMPALA")
    parser.add_argument("--runners", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=450.0)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    if args.runners:
        import ray

        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    import relayrl

    config = (getattr(relayrl, args.algo + "Config")().environment("CartPole-v1")
              .debugging(seed=args.seed, logger_config={"type": "none"}))
    if args.runners:
        config.env_runners(num_env_runners=args.runners, num_cpus_per_env_runner=1 / args.runners)
    start = time.perf_counter()
    algo = config.build_algo()
    built = time.perf_counter()
    # Stopped after the RESULT line, as the peers' anchors do: run.py times launch -> RESULT for both.
    result, best = train_to_bar(algo, stop_reward=args.stop_reward, stop_timesteps=BUDGET[args.algo], stop=False)
    train_s = time.perf_counter() - built
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    summary = report({"task": f"{args.algo.lower()}_cartpole", "runners": args.runners, "seed": args.seed,
                      "solved": bool(ret >= args.stop_reward), "return": round(ret, 1), "best": round(best, 1),
                      "steps": steps, "train_s": round(train_s, 1), "build_s": round(built - start, 2),
                      "wall_s": round(time.perf_counter() - T0, 1), "sps": round(steps / train_s)}, args.json)
    algo.stop()
    return summary


if __name__ == "__main__":
    main()
