"""The loop the time-to-bar benchmarks share: train until the mean return reaches a bar or a budget
runs out, printing progress; then one `RESULT {json}` line (what benchmarks/run.py parses)."""
import json
import pathlib
import time
from typing import Any, Dict, Optional, Tuple


def train_to_bar(algo, *, stop_reward: float, stop_timesteps: int, stop_iters: Optional[int] = None,
                 print_every: int = 10, stop: bool = True) -> Tuple[Dict[str, Any], float]:
    """Train `algo` until the bar or a budget; returns (last result, best mean return). `stop`: stop `algo`
    afterwards (False: the caller stops it, e.g. after printing its RESULT line, as the peers' anchors do)."""
    start, best = time.perf_counter(), float("-inf")
    try:
        while True:
            result = algo.train()
            ret = result["env_runners"]["episode_return_mean"]
            steps = result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if result["training_iteration"] % print_every == 0:
                print(f"iter={result['training_iteration']} steps={steps} return={ret:.1f} "
                      f"t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= stop_reward or steps >= stop_timesteps or \
                    (stop_iters is not None and result["training_iteration"] >= stop_iters):
                return result, best
    except BaseException:
        if not stop:  # the caller will not get to stop it
            algo.stop()
        raise
    finally:
        if stop:
            algo.stop()


def report(summary: Dict[str, Any], json_path: Optional[pathlib.Path]) -> Dict[str, Any]:
    """Print the RESULT line and, if asked, write the summary as a JSON file."""
    print("RESULT " + json.dumps(summary))
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(summary, indent=2))
    return summary


def settings_benchmark(task: str, configs: Dict[str, Any], *, t0: float, stop_reward: float, stop_timesteps: int,
                       argv=None, doc: Optional[str] = None, extra=None) -> Dict[str, Any]:
    """The command line of a time-to-bar benchmark with `--settings` (the first of `configs` by default; each
    maps a seed to a config): build, train to the bar, report env steps, seconds from `t0` (the script's start)
    and CPU seconds. `extra(result)` adds figures from the last result."""
    import argparse

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--settings", choices=tuple(configs), default=next(iter(configs)))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=stop_reward)
    parser.add_argument("--stop-timesteps", type=int, default=stop_timesteps)
    parser.add_argument("--window", type=int, default=None,
                        help="the mean return over the last N episodes (metrics_num_episodes_for_smoothing); "
                             "default: the settings' own")
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    start, cpu_start = time.perf_counter(), time.process_time()
    config = configs[args.settings](args.seed)
    if args.window is not None:
        config = config.reporting(metrics_num_episodes_for_smoothing=args.window)
    algo = config.build_algo()
    built = time.perf_counter()
    result, _ = train_to_bar(algo, stop_reward=args.stop_reward, stop_timesteps=args.stop_timesteps)
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    end, cpu_s = time.perf_counter(), time.process_time() - cpu_start
    train_s = end - built
    return report({"task": task, "settings": args.settings, "seed": args.seed, "solved": bool(ret >= args.stop_reward),
                   "window": config.metrics_num_episodes_for_smoothing,
                   "return": round(ret, 1), "steps": steps, "train_s": round(train_s, 1),
                   "build_s": round(built - start, 2), "wall_s": round(end - t0, 1),
                   "env_steps_per_s": round(steps / train_s, 1),
                   # CPU seconds of this process: on a shared, busy machine wall time says little.
                   "cpu_s": round(cpu_s, 1), **(extra(result) if extra else {})}, args.json)
