"""BC, CQL and IQL updates per second, relayrl against d3rlpy, on the same data, networks and batch size.

    .venv/bin/python benchmarks/offline_updates.py [--algo bc|cql|iql|both|all] [--updates 300] [--rounds 3]
                                                   [--rows 20000] [--d3rlpy /work/peers/d3/bin/python]
                                                   [--baseline DIR] [--matmul-precision medium]
                                                   [--threads 1|default]

The data: `--rows` transitions recorded with relayrl's writer (CartPole-v1 from an untrained PPO policy for BC,
Pendulum-v1 from an untrained SAC policy for CQL and IQL), read by relayrl from the parquet files and by d3rlpy from
an .npz export of the same rows. Both sides: two 256-unit relu layers (BC: a policy head; CQL: an actor and twin
critics, 10 sampled actions for the conservative term; IQL: an actor, twin critics and a value network, the paper's
and d3rlpy's tau 0.005, beta 3, expectile 0.7), 256-row batches, single-threaded (OMP_NUM_THREADS=1,
torch.set_num_threads(1); `--threads default`: each library's own default on this machine, relayrl's "auto" Learner
threads and d3rlpy's torch threads, the cores), `--warmup` updates before the timed window. relayrl's window runs
train() with dataset_num_iters_per_learner = the update count (reading, checking and the Learner pipeline included);
d3rlpy's runs its `fit` loop (replay-buffer sampling included). Each side runs in its own process per round and the
rounds alternate (relayrl, d3rlpy, relayrl, ...); each prints a RESULT line, and the last line is one RESULT json
with the medians and their ratio (relayrl / d3rlpy; goal >= 2). Each side also reports `cpu_updates_per_s` (updates
per second of the process's CPU time): on a shared, loaded machine wall-clock rates swing with the load, CPU time
much less. `--baseline DIR` adds a third side in the same rounds: relayrl's worker importing relayrl from DIR (e.g.
an archive of main: `git archive main | tar -x -C DIR`), for before/after ratios. `--matmul-precision medium` runs
every side with torch.set_float32_matmul_precision("medium"): float32 tensors, products in bfloat16 with float32
sums on CPUs that have them (AMX, AVX512-BF16), the same setting on both sides.
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
# As this process started: `import relayrl` (make_data) sets OMP_WAIT_POLICY for itself, and each side's process
# must start with its own library's default (relayrl's passive waits, torch's spinning ones for d3rlpy).
USERS_WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY")
ENVS = {"bc": "CartPole-v1", "cql": "Pendulum-v1", "iql": "Pendulum-v1"}
CHOICES = {"both": ("bc", "cql"), "all": ("bc", "cql", "iql")}


def make_data(folder: pathlib.Path, algo: str, rows: int) -> pathlib.Path:
    """Record `rows` transitions for `algo` into folder/<algo> (parquet) and folder/<algo>.npz; returns the folder."""
    import numpy as np

    from relayrl import PPOConfig, SACConfig
    from relayrl.offline.files import input_files
    from relayrl.offline.reader import ParquetFiles, RowStream

    out = folder / algo
    if not out.exists():
        config = (PPOConfig().env_runners(num_envs_per_env_runner=8) if algo == "bc" else SACConfig())
        config = (config.environment(ENVS[algo]).offline_data(output=str(out), output_write_episodes=False)
                  .debugging(seed=0, logger_config={"type": "none"}))
        algo_ = config.build_algo()
        try:
            recorded = 0
            while recorded < rows:
                recorded += sum(len(e) for e in algo_.env_runner.sample(num_timesteps=min(1000, rows - recorded)))
        finally:
            algo_.stop()
        fs, files = input_files(str(out))
        source = ParquetFiles(fs, files)
        columns = RowStream(source).next_batch(source.num_rows).columns
        np.savez(folder / f"{algo}.npz", **{k: columns[k] for k in ("obs", "actions", "rewards", "terminateds",
                                                                     "truncateds")})
    return out


def relayrl_worker(algo: str, data: str, updates: int, warmup: int, matmul_precision: str, threads: str) -> dict:
    """relayrl's timed window (runs in its own process, like d3rlpy's)."""
    from relayrl import BCConfig, CQLConfig, IQLConfig  # before torch, as a user's script (OpenMP's passive waits)
    import torch

    if threads == "1":
        torch.set_num_threads(1)
    torch.set_float32_matmul_precision(matmul_precision)

    if algo == "bc":
        config = BCConfig().rl_module(model_config={"fcnet_hiddens": [256, 256], "fcnet_activation": "relu"})
        config.training(lr=1e-3, train_batch_size=256)
    elif algo == "cql":
        config = CQLConfig().training(train_batch_size_per_learner=256, bc_iters=0)
    else:  # SAC's networks: two 256-unit relu layers
        config = IQLConfig().training(train_batch_size=256, tau=0.005, beta=3.0, expectile=0.7)
    config = (config.environment(ENVS[algo]).offline_data(input_=data)
              .reporting(min_train_timesteps_per_iteration=0).debugging(seed=0, logger_config={"type": "none"}))
    built = config.copy(copy_frozen=False).offline_data(dataset_num_iters_per_learner=warmup).build_algo()
    try:
        built.train()  # warm-up
        built.config._is_frozen = False
        built.config.offline_data(dataset_num_iters_per_learner=updates)
        built.config.freeze()
        start = time.perf_counter()
        cpu_start = time.process_time()
        built.train()
        cpu_seconds = time.process_time() - cpu_start
        seconds = time.perf_counter() - start
        fast = built.offline_data.rows.prelearner.uses_fast_path
    finally:
        built.stop()
    return {"peer": "relayrl", "algo": algo, "updates": updates, "seconds": round(seconds, 3),
            "updates_per_s": round(updates / seconds, 2), "cpu_updates_per_s": round(updates / cpu_seconds, 2),
            "fast_path": fast, "matmul_precision": torch.get_float32_matmul_precision(), "threads": threads}


def _run(cmd, threads: str, pythonpath=HERE.parent) -> dict:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OMP_WAIT_POLICY", None)
    if USERS_WAIT_POLICY is not None:
        env["OMP_WAIT_POLICY"] = USERS_WAIT_POLICY
    if threads == "1":
        env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            print(line, flush=True)
            return json.loads(line[len("RESULT "):])
    return {"error": (proc.stderr or proc.stdout)[-1500:]}


def _median(runs, key):
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else None


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algo", choices=("bc", "cql", "iql", "both", "all"), default="both")
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--data", type=pathlib.Path, default=None, help="folder for the recorded data (kept)")
    parser.add_argument("--d3rlpy", default="/work/peers/d3/bin/python", help="python of d3rlpy's venv")
    parser.add_argument("--baseline", type=pathlib.Path, default=None,
                        help="a relayrl tree to time as a third side (before/after comparisons)")
    parser.add_argument("--matmul-precision", choices=("highest", "high", "medium"), default="highest",
                        help="torch.set_float32_matmul_precision on every side (medium: bfloat16 products)")
    parser.add_argument("--threads", choices=("1", "default"), default="1",
                        help="1: every side single-threaded; default: each library's own thread settings")
    parser.add_argument("--worker", choices=tuple(ENVS), help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        result = relayrl_worker(args.worker, args.input, args.updates, args.warmup, args.matmul_precision,
                                args.threads)
        print("RESULT " + json.dumps(result), flush=True)
        return result

    folder = args.data or pathlib.Path(tempfile.mkdtemp(prefix="relayrl_offline_updates_"))
    folder.mkdir(parents=True, exist_ok=True)
    summary = {}
    for algo in CHOICES.get(args.algo, (args.algo,)):
        data = make_data(folder, algo, args.rows)
        rounds = {"relayrl": [], "d3rlpy": [], **({"baseline": []} if args.baseline else {})}
        worker = [sys.executable, __file__, "--worker", algo, "--input", str(data), "--updates", str(args.updates),
                  "--warmup", str(args.warmup), "--matmul-precision", args.matmul_precision, "--threads", args.threads]
        for _ in range(args.rounds):
            rounds["relayrl"].append(_run(worker, args.threads))
            if args.baseline:
                rounds["baseline"].append(_run(worker, args.threads, args.baseline))
            rounds["d3rlpy"].append(_run([args.d3rlpy, str(HERE / "peer_d3rlpy_offline.py"), "--algo", algo,
                                          "--data", str(folder / f"{algo}.npz"), "--updates", str(args.updates),
                                          "--warmup", str(args.warmup),
                                          "--matmul-precision", args.matmul_precision,
                                          "--threads", args.threads], args.threads))
        summary[algo] = {"rounds": rounds}
        for rate in ("updates_per_s", "cpu_updates_per_s"):
            medians = {name: _median(runs, rate) for name, runs in rounds.items()}
            summary[algo].update({f"{name}_{rate}": value for name, value in medians.items()})
            for name in ("relayrl", "baseline"):
                if medians.get(name) and medians["d3rlpy"]:
                    summary[algo][f"{name}_ratio" + ("_cpu" if rate.startswith("cpu") else "")] = round(
                        medians[name] / medians["d3rlpy"], 2)
    print("RESULT " + json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "rounds"} for k, v in summary.items()}))
    return summary


if __name__ == "__main__":
    main()
