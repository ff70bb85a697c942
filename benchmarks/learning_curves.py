"""The learning-curve images of the docs' benchmarks page (docs/images/*.png), made from real runs.

Each headline run is trained with `relayrl train` (seed 0, each algorithm's defaults unless the run names its
settings) into its own run folder, and drawn with `relayrl plot`: the pictures come from the commands a user
types, and rerunning this script regenerates every one of them.

    python benchmarks/learning_curves.py                     # all runs: 18 min on 2 cores at load 10-17
    python benchmarks/learning_curves.py --only ppo_cartpole --runs-dir /tmp/curves
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# image name -> (run folder, whose name `relayrl plot` puts above the curve; `relayrl train` arguments but the seed)
RUNS = {
    "ppo_cartpole": ("PPO_CartPole-v1_tuned-example_seed-0",
                     ["PPO", "--env", "CartPole-v1", "--stop-reward", "450", "--stop-timesteps", "300000",
                      "--num-envs-per-env-runner", "16", "--minibatch-size", "512", "--num-epochs", "8",
                      "--lr", "3e-3", "--gamma", "0.98", "--lambda", "0.9"]),
    "ppo_cartpole_defaults": ("PPO_CartPole-v1_defaults_seed-0",
                              ["PPO", "--env", "CartPole-v1", "--stop-reward", "450", "--stop-timesteps", "300000"]),
    "dqn_cartpole": ("DQN_CartPole-v1_defaults_seed-0",
                     ["DQN", "--env", "CartPole-v1", "--stop-reward", "450", "--stop-timesteps", "200000"]),
    "sac_pendulum": ("SAC_Pendulum-v1_defaults_last-10-episodes_seed-0",
                     ["SAC", "--env", "Pendulum-v1", "--stop-reward", "-250", "--stop-timesteps", "20000",
                      "--metrics-num-episodes-for-smoothing", "10"]),
    "appo_cartpole": ("APPO_CartPole-v1_defaults_seed-0",
                      ["APPO", "--env", "CartPole-v1", "--stop-reward", "450", "--stop-timesteps", "1000000"]),
}


def relayrl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "relayrl", *args], cwd=ROOT, capture_output=True, text=True)


def make_curve(name: str, runs_dir: pathlib.Path, out_dir: pathlib.Path) -> dict:
    run_dir = runs_dir / RUNS[name][0]
    logger = json.dumps({"logdir": str(run_dir), "type": "json"})
    train = relayrl("train", *RUNS[name][1], "--seed", "0", "--logger-config", logger, "--no-checkpoint-at-end",
                    "--json")
    if train.returncode not in (0, 1):  # 1: stopped short of the stop reward, still a real curve
        raise SystemExit(f"{name}: relayrl train failed:\n{train.stderr[-3000:]}")
    out = out_dir / f"{name}.png"
    plot = relayrl("plot", str(run_dir), "--out", str(out))
    if plot.returncode != 0:
        raise SystemExit(f"{name}: relayrl plot failed:\n{plot.stderr[-3000:]}")
    summary = json.loads(train.stdout.strip().splitlines()[-1])
    return {"run": RUNS[name][0], "image": str(out.relative_to(ROOT)), "kib": out.stat().st_size // 1024,
            **{k: summary.get(k) for k in ("stop_reward_reached", "num_env_steps_sampled_lifetime", "episode_return_mean")}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(RUNS), help=f"comma-separated runs of {', '.join(RUNS)}")
    parser.add_argument("--runs-dir", default=None, help="where the run folders go (default: a temp folder)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"), help="folder of the PNG files")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(names) - set(RUNS))
    if unknown:
        parser.error(f"unknown runs {unknown}; choose from {', '.join(RUNS)}")
    out_dir = pathlib.Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs_dir = pathlib.Path(args.runs_dir or tmp).resolve()
        for name in names:
            print("RESULT", json.dumps(make_curve(name, runs_dir, out_dir)), flush=True)


if __name__ == "__main__":
    main()
