"""Seconds from `python` start to BC's bar (an evaluation mean return of 400 on CartPole-v1), relayrl against RLlib.

    .venv/bin/python benchmarks/offline_time_to_bar.py [--data DIR] [--rounds 1] [--rllib-python /work/peers/rl/bin/python]

The data: 50k CartPole-v1 steps recorded with relayrl's writer (transition rows) from a PPO policy trained to a mean
return of 450, acting greedily (made once into `--data`, ~1-3 minutes; reused when the folder exists). Both sides
train BC on those same files with the same settings: lr 1e-3, 256-row batches, their default model (two 256-unit
tanh layers), 10 updates per iteration, then 10 greedy evaluation episodes (the bar: their mean >= 400). RLlib 2.60
runs in the peers' venv (benchmarks/peer_rllib_bc.py: Ray Data reads relayrl's files), relayrl in this one. Each
side is one process, timed by this script from launch to exit (interpreter start, imports, Ray start-up for RLlib,
reading and training); rounds alternate. Prints each side's RESULT and one RESULT json line with the median
seconds and their ratio (RLlib / relayrl; goal >= 10).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
RELAYRL_BC = """
import json, sys, time
from relayrl import BCConfig
algo = (BCConfig().environment("CartPole-v1").offline_data(input_=sys.argv[1], dataset_num_iters_per_learner=10)
        .evaluation(evaluation_interval=1, evaluation_duration=10, evaluation_config={"explore": False})
        .reporting(metrics_num_episodes_for_smoothing=10).debugging(seed=0, logger_config={"type": "none"})
        .build_algo())
ret, iteration = float("-inf"), 0
while iteration < 200 and ret < 400.0:
    result = algo.train()
    iteration, ret = result["training_iteration"], result["evaluation"]["env_runners"]["episode_return_mean"]
algo.stop()
print("RESULT " + json.dumps({"peer": "relayrl", "reached": bool(ret >= 400.0), "iterations": iteration,
                              "updates": 10 * iteration, "return": round(float(ret), 1)}), flush=True)
"""


def make_expert_data(folder: pathlib.Path, steps: int = 50_000) -> None:
    from relayrl import PPOConfig
    from relayrl.testing.learning import record_policy

    config = PPOConfig().environment("CartPole-v1").debugging(seed=0, logger_config={"type": "none"})
    algo = config.build_algo()
    try:
        while algo.train()["env_runners"]["episode_return_mean"] < 450.0:
            pass
        weights = algo.learner_group.get_weights()
    finally:
        algo.stop()
    record_policy(config, weights, str(folder), steps)


def _timed(cmd, env) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=7200)
    seconds = time.perf_counter() - start
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = {**json.loads(line[len("RESULT "):]), "seconds_from_start": round(seconds, 2)}
            print("RESULT " + json.dumps(result), flush=True)
            return result
    return {"error": (proc.stderr or proc.stdout)[-1500:], "seconds_from_start": round(seconds, 2)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, default=None, help="the expert data's folder (made if missing)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--rllib-python", default="/work/peers/rl/bin/python")
    args = parser.parse_args(argv)
    data = args.data or pathlib.Path(tempfile.mkdtemp(prefix="relayrl_bc_bar_")) / "expert"
    if not data.exists():
        make_expert_data(data)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(HERE.parent), "RAY_ADDRESS": "local"}
    runs = {"relayrl": [], "rllib": []}
    for _ in range(args.rounds):
        runs["relayrl"].append(_timed([sys.executable, "-c", RELAYRL_BC, str(data)], env))
        runs["rllib"].append(_timed([args.rllib_python, str(HERE / "peer_rllib_bc.py"), "--data", str(data)], env))
    medians = {name: statistics.median(r["seconds_from_start"] for r in results)
               for name, results in runs.items()}
    reached = {name: all(r.get("reached") for r in results) for name, results in runs.items()}
    summary = {"relayrl_s": medians["relayrl"], "rllib_s": medians["rllib"], "reached": reached,
               "ratio_rllib_over_relayrl": round(medians["rllib"] / medians["relayrl"], 1)}
    print("RESULT " + json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
