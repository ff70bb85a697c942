"""Seed 001's policy-gradient policy with TensorFlow vs with torch, side by side in one run.

    python benchmarks/policy_pg_tf_vs_torch.py [--steps 20000] [--no-numpy-forward]

The same settings for each (CartPole-v1, lr 0.0004, train batch 200, seed 0, the postprocessor with
use_critic=False, one learn_on_batch per iteration), each in its own process: torch
(examples/policy_gradient_custom_policy.py), TF eager and TF with eager_tracing=True
(examples/policy_gradient_tf_policy.py). Each trains `--steps` env steps; env steps/s is over the training
loop (after the algorithm is built), in wall and in CPU seconds of the process (steadier on a shared, loaded
machine); the first iteration that reaches a mean return of 150 is reported too.
Prints one `RESULT {json}` line per run and the ratios to torch.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
RUNS = {"torch": ("policy_gradient_custom_policy", {}),
        "tf2": ("policy_gradient_tf_policy", {"framework": "tf2", "eager_tracing": False}),
        "tf2_traced": ("policy_gradient_tf_policy", {"framework": "tf2", "eager_tracing": True})}


def run_one(name: str, steps_budget: int, numpy_forward: bool) -> dict:
    t0 = time.perf_counter()
    sys.path.insert(0, str(EXAMPLES))
    module = __import__(RUNS[name][0])
    algo = module.MyAlgo(config={"env": "CartPole-v1", "lr": 0.0004, "train_batch_size": 200, "seed": 0,
                                 "logger_config": {"type": "none"}, **RUNS[name][1]})
    algo.get_policy().config["_disable_numpy_forward"] = not numpy_forward
    t_built, cpu_built = time.perf_counter(), time.process_time()
    steps, reached = 0, None
    while steps < steps_budget:
        result = algo.train()
        steps = result["num_env_steps_sampled_lifetime"]
        if reached is None and result["env_runners"]["episode_return_mean"] >= 150:
            reached = steps
    train_time, train_cpu = time.perf_counter() - t_built, time.process_time() - cpu_built
    algo.stop()
    return {"run": name, "steps": steps, "steps_to_150": reached, "setup_s": round(t_built - t0, 2),
            "train_time_s": round(train_time, 2), "env_steps_per_s": round(steps / train_time, 1),
            "train_cpu_s": round(train_cpu, 2), "env_steps_per_cpu_s": round(steps / train_cpu, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--no-numpy-forward", action="store_true", help="act through the framework's forward pass")
    parser.add_argument("--one", choices=sorted(RUNS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print("RESULT " + json.dumps(run_one(args.one, args.steps, not args.no_numpy_forward)), flush=True)
        return
    results = {}
    for name in RUNS:
        cmd = [sys.executable, __file__, "--one", name, "--steps", str(args.steps)]
        cmd += ["--no-numpy-forward"] if args.no_numpy_forward else []
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
        line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            raise RuntimeError(f"{name} printed no RESULT line:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
        results[name] = json.loads(line[len("RESULT "):])
        print(line, flush=True)
    for key in ("env_steps_per_s", "env_steps_per_cpu_s"):
        base = results["torch"][key]
        print(f"{key} relative to torch: " + ", ".join(f"{k} {v[key] / base:.2f}x" for k, v in results.items()))


if __name__ == "__main__":
    main()
