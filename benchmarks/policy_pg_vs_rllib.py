"""Seed 001's policy-gradient Policy, side by side in one run: relayrl vs RLlib 2.60's old API stack.

    python benchmarks/policy_pg_vs_rllib.py [--peers /work/peers/venv/bin/python]

Both build the same policy with build_policy_class (postprocess_fn = discounted returns, loss -mean(logp * adv)),
CartPole-v1, lr 0.0004, train batch 200, seed 0, one learn_on_batch per iteration, and stop at the first
iteration whose mean return is >= 150 (or 300,000 env steps). RLlib runs ../shared/anchors/rllib_oldstack_pg.py
in the peers' venv. Prints one `RESULT {json}` line per library and the speed ratios.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import time

ANCHOR = pathlib.Path(os.environ.get("RELAYRL_ANCHORS", "/work/shared/anchors")) / "rllib_oldstack_pg.py"


def run_relayrl() -> dict:
    t0 = time.perf_counter()
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
    from policy_gradient_custom_policy import MyAlgo

    algo = MyAlgo(config={"env": "CartPole-v1", "lr": 0.0004, "train_batch_size": 200, "seed": 0,
                          "logger_config": {"type": "none"}})
    t_built = time.perf_counter()
    best, steps = -1.0, 0
    while best < 150 and steps < 300_000:
        result = algo.train()
        ret = result["env_runners"]["episode_return_mean"]
        best = max(best, ret if ret == ret else -1.0)
        steps = result["num_env_steps_sampled_lifetime"]
    algo.stop()
    wall = time.perf_counter() - t0
    return {"library": "relayrl", "best": best, "steps": steps, "time_s": round(wall, 2),
            "train_time_s": round(time.perf_counter() - t_built, 2),
            "env_steps_per_s": round(steps / (time.perf_counter() - t_built), 1)}


def run_rllib(python: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_ADDRESS": "local"}
    t0 = time.perf_counter()
    proc = subprocess.run([python, str(ANCHOR)], capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - t0
    match = re.search(r"RESULT lr \S+ bs \S+ best (\S+) steps (\d+) time (\S+)", proc.stdout)
    if match is None:
        raise RuntimeError(f"the RLlib anchor printed no RESULT line:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    best, steps, train_time = float(match[1]), int(match[2]), float(match[3])
    return {"library": "rllib_oldstack", "best": best, "steps": steps, "time_s": round(wall, 2),
            "train_time_s": train_time, "env_steps_per_s": round(steps / train_time, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peers", default="/work/peers/venv/bin/python")
    args = parser.parse_args()
    results = []
    for run in (run_relayrl, lambda: run_rllib(args.peers)):
        results.append(run())
        print("RESULT " + json.dumps(results[-1]), flush=True)
    ours, theirs = results
    print(f"ratio env_steps_per_s {ours['env_steps_per_s'] / theirs['env_steps_per_s']:.1f}x, "
          f"wall time to 150 {theirs['time_s'] / ours['time_s']:.1f}x (process start to stop), "
          f"training time to 150 {theirs['train_time_s'] / ours['train_time_s']:.1f}x")


if __name__ == "__main__":
    main()
