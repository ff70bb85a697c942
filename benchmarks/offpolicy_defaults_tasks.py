"""DQN or SAC with relayrl's defaults on a gymnasium task: env steps until the mean return of the last
`--window` episodes reaches `--target` (the "Learning results" rows of docs/benchmarks.md).

    .venv/bin/python benchmarks/offpolicy_defaults_tasks.py dqn Acrobot-v1 --target -100 --budget 100000 --seed 0
    .venv/bin/python benchmarks/offpolicy_defaults_tasks.py sac LunarLanderContinuous-v3 --target 200 --budget 300000
    .venv/bin/python benchmarks/offpolicy_defaults_tasks.py dqn LunarLander-v3 --target 200 --budget 500000

Nothing is tuned but the smoothing window (`metrics_num_episodes_for_smoothing`, 100 by default, the usual
"solved" window for Acrobot and LunarLander) and what `--training '{"option": value}'` changes. LunarLander
needs Box2D (`pip install "relayrl[box2d]"`).
Prints progress every 10k env steps and one `RESULT {json}` line (env steps, learner updates, return, wall and CPU
seconds).
"""
import argparse
import json
import time

from relayrl import DQNConfig, SACConfig

CONFIGS = {"dqn": DQNConfig, "sac": SACConfig}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("algo", choices=tuple(CONFIGS))
    parser.add_argument("env")
    parser.add_argument("--target", type=float, required=True)
    parser.add_argument("--budget", type=int, required=True, help="env steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--training", type=json.loads, default={},
                        help="options to change from the defaults, as JSON for config.training(), "
                             "e.g. '{\"critic_lr\": 0.001}'")
    args = parser.parse_args(argv)
    config = (CONFIGS[args.algo]().environment(args.env).training(**args.training)
              .reporting(metrics_num_episodes_for_smoothing=args.window)
              .debugging(seed=args.seed, logger_config={"type": "none"}))
    algo = config.build_algo()
    start, cpu_start, best, printed = time.perf_counter(), time.process_time(), float("-inf"), 0
    try:
        while True:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if steps - printed >= 10_000:
                printed = steps
                print(f"steps={steps} return={ret:.1f} best={best:.1f} t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= args.target or steps >= args.budget:
                break
    finally:
        algo.stop()
    print("RESULT " + json.dumps({
        "algo": args.algo, "env": args.env, "seed": args.seed, "training": args.training, "window": args.window,
        "target": args.target, "solved": bool(ret >= args.target), "steps": steps,
        "updates": result.get("num_env_steps_trained_lifetime", 0) // config.total_train_batch_size,
        "return": round(ret, 1), "best": round(best, 1),
        "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu_start, 1)}))


if __name__ == "__main__":
    main()
