"""Seed 001's policy-gradient Policy, side by side in one run: relayrl vs RLlib 2.60's old API stack.

    python benchmarks/policy_pg_vs_rllib.py [--peers /work/peers/venv/bin/python] [--repeats 1] [--before TREE]

Both build the same policy with build_policy_class (postprocess_fn = discounted returns, loss -mean(logp * adv)),
CartPole-v1, lr 0.0004, train batch 200, seed 0, one learn_on_batch per iteration, and stop at the first
iteration whose mean return is >= 150 (or 300,000 env steps). RLlib runs ../shared/anchors/rllib_oldstack_pg.py
in the peers' venv. Both run as fresh subprocesses with OMP_NUM_THREADS=1, timed the same way: `to_bar_s` from
starting the process to its RESULT line, printed as 150 is reached (interpreter, imports, build, training; as
benchmarks/run.py times every time to a bar), `time_s` to its exit (the interpreter's teardown and, for RLlib,
Ray's shutdown included), `train_time_s` from the built algorithm to 150 (as each script reports it). With
--repeats N the runs alternate (relayrl, RLlib, ...) so machine load hits both alike. `--before TREE` (a source tree
of another relayrl version, e.g. `git archive main | tar -x -C /tmp/base`) adds its run to each round (before, after,
RLlib): both versions against RLlib in the same run. Prints one `RESULT {json}` line per run and the speed ratios of
the medians.
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


def relayrl_child() -> None:
    """Runs in the child process: train to 150 and print the training part's figures."""
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
    train_time = time.perf_counter() - t_built
    # printed at the bar, before stopping, as the anchor prints its RESULT line before Ray's shutdown at exit
    print(f"RESULT lr 0.0004 bs 200 best {best} steps {steps} time {train_time:.2f}", flush=True)
    algo.stop()


def _run(library: str, cmd: list) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_ADDRESS": "local", "PYTHONUNBUFFERED": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines, to_bar = [], None
    for line in proc.stdout:  # read as it comes: the RESULT line's arrival is the time to the bar
        lines.append(line)
        if line.startswith("RESULT") and to_bar is None:
            to_bar = time.perf_counter() - t0
    proc.wait(timeout=3600)
    wall = time.perf_counter() - t0
    output = "".join(lines)
    match = re.search(r"RESULT lr \S+ bs \S+ best (\S+) steps (\d+) time (\S+)", output)
    if match is None:
        raise RuntimeError(f"{library} printed no RESULT line:\n{output[-4000:]}")
    best, steps, train_time = float(match[1]), int(match[2]), float(match[3])
    return {"library": library, "best": best, "steps": steps, "to_bar_s": round(to_bar, 2), "time_s": round(wall, 2),
            "train_time_s": train_time, "env_steps_per_s": round(steps / train_time, 1)}


def run_relayrl(root: pathlib.Path = pathlib.Path(__file__).resolve().parents[1], library: str = "relayrl") -> dict:
    """The relayrl child of the tree `root` (its relayrl, its examples, its copy of this script)."""
    env_path = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    env_path = [p for p in env_path if p and pathlib.Path(p).resolve() != pathlib.Path(__file__).resolve().parents[1]]
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root)] + env_path)
    try:
        return _run(library, [sys.executable, str(root / "benchmarks" / pathlib.Path(__file__).name), "--child"])
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def run_rllib(python: str) -> dict:
    return _run("rllib_oldstack", [python, str(ANCHOR)])


def _median(values: list) -> float:
    values = sorted(values)
    return values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peers", default="/work/peers/venv/bin/python")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--before", type=pathlib.Path, default=None, help="another relayrl source tree to run too")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return relayrl_child()
    from run import precompile

    precompile()  # as pip install does: the timed runs do not compile relayrl's source on import
    runners = [run_relayrl, lambda: run_rllib(args.peers)]
    if args.before is not None:
        import compileall

        for folder in ("relayrl", "examples"):
            compileall.compile_dir(str(args.before.resolve() / folder), quiet=1)
        runners.insert(0, lambda: run_relayrl(args.before.resolve(), "relayrl_before"))
    runs = {}
    for _ in range(args.repeats):
        for run in runners:
            result = run()
            runs.setdefault(result["library"], []).append(result)
            print("RESULT " + json.dumps(result), flush=True)
    keys = ("env_steps_per_s", "to_bar_s", "time_s", "train_time_s")
    medians = {lib: {k: _median([r[k] for r in results]) for k in keys} for lib, results in runs.items()}
    theirs = medians["rllib_oldstack"]
    for lib in [lib for lib in medians if lib != "rllib_oldstack"]:
        ours = medians[lib]
        print(f"{lib} vs RLlib (medians of {args.repeats}): env_steps_per_s "
              f"{ours['env_steps_per_s'] / theirs['env_steps_per_s']:.1f}x, "
              f"wall time to 150 {theirs['to_bar_s'] / ours['to_bar_s']:.1f}x (process start to the RESULT line), "
              f"process start to exit {theirs['time_s'] / ours['time_s']:.1f}x, "
              f"training time to 150 {theirs['train_time_s'] / ours['train_time_s']:.1f}x")


if __name__ == "__main__":
    main()
