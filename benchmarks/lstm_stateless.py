"""Memory, side by side in one run: wall time from process start to a mean return of 350 (last 100 episodes) on
StatelessCartPole (CartPole without the velocities, TimeLimit 500), each contestant in its own process, one after
the other, each with OMP_NUM_THREADS=1.

- relayrl PPO with only `use_lstm=True` (`--run relayrl-defaults`): what a user gets, PPO's stateful defaults;
- relayrl PPO with rl-zoo's recurrent settings (`--run relayrl-lstm`; the settings are LSTM_PPO below);
- relayrl PPO with those settings and a plain MLP instead of the LSTM (`--run relayrl-mlp`): the same env
  and budget, to show that memory is what solves it;
- sb3-contrib's RecurrentPPO with rl-zoo's CartPoleNoVel-v1 settings (../shared/anchors/sb3_recurrent_stateless.py;
  its own budget of 500k env steps);
- sb3-contrib's RecurrentPPO with its defaults (benchmarks/peer_sb3_recurrent_defaults.py);
- RLlib 2.60's LSTM PPO example (../shared/anchors/rllib_lstm_stateless.py).

Usage: python benchmarks/lstm_stateless.py [--peers PEER_PYTHON] [--anchors DIR] [--budget STEPS] [--max-s S]
                                          [--skip NAMES] [--out FILE]
Prints one RESULT json line per contestant and a summary table; `--run NAME` runs one relayrl contestant in this
process (what the driver calls). Wall seconds include imports and start-up (subprocess start to exit). A contestant
that does not reach 350 within the budget or `--max-s` wall seconds shows "not reached, best X".
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
TARGET = 350.0
# The peers' scripts: ../shared/anchors beside the main checkout (a worktree sits one folder deeper).
ANCHOR_DIRS = [HERE.parents[1] / "shared" / "anchors", HERE.parents[2] / "shared" / "anchors"]

# relayrl's LSTM PPO settings: rl-zoo's CartPoleNoVel-v1 RecurrentPPO settings in RLlib's option names (gamma
# 0.98, lambda 0.8, lr 1e-3 decaying linearly, clip 0.2, grad clip 0.5, LSTM of 64 on the MeanStdFilter'd
# observation, heads [64] relu, own critic LSTM, 32-step fragments, minibatches of 256), except the batch: 32
# envs and 10 epochs instead of 8 envs and 20. The LSTM's cost per update grows less than its batch (torch's CPU
# LSTM runs one small kernel per time step), so 4x the env steps per update at half the epochs costs less CPU
# per env step. Minibatches of 256 (40 gradient steps per 1,024-step batch): seeds 0-15 all reach 350 within
# 61k-191k env steps; the whole batch as one minibatch cost half the CPU per env step but missed 350 within
# 300k on 3 of seeds 0-9 (docs/stateful_modules.md, "Learner settings").
LSTM_PPO = dict(
    env_runners=dict(num_envs_per_env_runner=32, rollout_fragment_length=32),
    training=dict(train_batch_size=1024, minibatch_size=256, num_epochs=10, gamma=0.98, lambda_=0.8,
                  lr=[[0, 1e-3], [500_000, 0.0]], grad_clip=0.5, clip_param=0.2, vf_clip_param=float("inf"),
                  use_kl_loss=False, vf_loss_coeff=0.5, entropy_coeff=0.0),
    # max_seq_len 33: a 32-step fragment plus the bootstrap step is one sequence (17 was cheaper per update
    # but less stable in one run).
    model_config=dict(use_lstm=True, lstm_cell_size=64, fcnet_hiddens=[], max_seq_len=33, head_fcnet_hiddens=[64],
                      head_fcnet_activation="relu", vf_share_layers=False),
)


def lstm_ppo_config(*, use_lstm: bool = True, seed: int = 0):
    """The benchmark's (and the learning test's) PPO config on StatelessCartPole (TimeLimit 500)."""
    from relayrl import DefaultModelConfig, PPOConfig
    from relayrl.testing.learning import stateless_cartpole

    stateless_cartpole()  # registers StatelessCartPole-v1 (TimeLimit 500)
    model = dict(LSTM_PPO["model_config"])
    if not use_lstm:
        model.update(use_lstm=False, fcnet_hiddens=[64])
    return (PPOConfig().environment("StatelessCartPole-v1")
            .env_runners(env_to_module_connector=_mean_std_filter, **LSTM_PPO["env_runners"])
            .training(**LSTM_PPO["training"])
            .rl_module(model_config=DefaultModelConfig(**model))
            .debugging(seed=seed))


def defaults_ppo_config(seed: int = 0):
    """PPO with only use_lstm=True on StatelessCartPole (TimeLimit 500): PPO's stateful-module defaults."""
    from relayrl import PPOConfig
    from relayrl.testing.learning import stateless_cartpole

    return (PPOConfig().environment(stateless_cartpole()).rl_module(model_config={"use_lstm": True})
            .debugging(seed=seed))


RELAYRL_CONFIGS = {"relayrl-defaults": defaults_ppo_config,
                   "relayrl-lstm": lambda seed: lstm_ppo_config(use_lstm=True, seed=seed),
                   "relayrl-mlp": lambda seed: lstm_ppo_config(use_lstm=False, seed=seed)}


def _mean_std_filter(env=None, spaces=None, device=None):
    from relayrl.connectors import MeanStdFilter

    return MeanStdFilter()


def run_relayrl(name: str, budget: int, seed: int, max_s: float) -> dict:
    start = time.perf_counter()
    algo = RELAYRL_CONFIGS[name](seed).build_algo()
    best, ret, steps = float("-inf"), float("nan"), 0
    try:
        while True:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if result["training_iteration"] % 40 == 0:
                print(f"steps={steps} return={ret:.1f} t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= TARGET or steps >= budget or time.perf_counter() - start >= max_s:
                break
    finally:
        algo.stop()
    return {"name": name, "solved": ret >= TARGET, "steps": steps, "best": round(best, 1),
            "in_process_s": round(time.perf_counter() - start, 1)}


def run_process(name: str, command: list, env: dict) -> dict:
    """Run one contestant; wall seconds from process start to exit, plus its RESULT line."""
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT")]
    summary = {"name": name, "wall_s": round(wall, 1), "result": lines[-1][len("RESULT "):] if lines else None,
               "progress": [line for line in proc.stdout.splitlines() if line.startswith(("steps=", "iter="))][-40:]}
    if proc.returncode != 0 or not lines:
        summary["error"] = (proc.stderr or proc.stdout)[-600:]
    else:
        summary["outcome"] = outcome(summary["result"], summary["progress"])
    print("RESULT " + json.dumps(summary), flush=True)
    return summary


def outcome(result: str, progress: list) -> dict:
    """solved, env steps and best mean return from a contestant's RESULT line: relayrl's json, or a peer's
    `name key=value ...`; where that has no best=, the best of its progress lines `... ret=X ...` (printed every
    10k env steps or so: a lower bound)."""
    if result.startswith("{"):
        fields = json.loads(result)
    else:
        fields = dict(token.split("=", 1) for token in result.split() if "=" in token)
        returns = [float(token[4:]) for line in progress for token in line.split() if token.startswith("ret=")]
        fields.setdefault("best", max((r for r in returns if r == r), default=float("nan")))
    return {"solved": str(fields["solved"]) == "True", "steps": int(fields["steps"]), "best": float(fields["best"])}


def summary_table(results: list) -> str:
    """Markdown: each contestant's outcome and wall time, and its wall time over relayrl-defaults' (> where the
    contestant stopped short of 350: relayrl-defaults is faster by more than that)."""
    base = next((r for r in results if r["name"] == "relayrl-defaults" and r.get("outcome", {}).get("solved")), None)
    lines = ["| contestant | env steps to 350 | wall s (process start to exit) | wall s / relayrl-defaults' |",
             "|---|---|---|---|"]
    for r in results:
        if "outcome" not in r:
            lines.append(f"| {r['name']} | error: {r.get('error', '')[-120:]!r} | {r['wall_s']} | - |")
            continue
        o = r["outcome"]
        reached = f"{o['steps']:,}" if o["solved"] else f"not reached, best {o['best']:.1f} in {o['steps']:,}"
        ratio = "-" if base is None or r is base else \
            f"{'' if o['solved'] else '> '}{r['wall_s'] / base['wall_s']:.2f}x"
        lines.append(f"| {r['name']} | {reached} | {r['wall_s']} | {ratio} |")
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", choices=sorted(RELAYRL_CONFIGS))
    parser.add_argument("--peers", default="/work/peers/rl/bin/python", help="the peers' venv python ('' skips)")
    parser.add_argument("--anchors", default=next((str(p) for p in ANCHOR_DIRS if p.is_dir()), str(ANCHOR_DIRS[0])))
    parser.add_argument("--budget", type=int, default=500_000, help="env steps (the rl-zoo anchor's own: 500k)")
    parser.add_argument("--seed", type=int, default=0, help="relayrl's seed (the sb3-contrib runs are unseeded)")
    parser.add_argument("--max-s", "--peer-max-s", dest="max_s", type=float, default=600.0,
                        help="stop a contestant after this many seconds (ANCHOR_MAX_S for peers); it then reports "
                             "not reached")
    parser.add_argument("--skip", default="", help="comma-separated contestants to leave out")
    parser.add_argument("--out", type=pathlib.Path)
    return parser.parse_args(argv)


def contestants(args: argparse.Namespace) -> list:
    """(name, command) of every contestant not in --skip, relayrl's first."""
    me = [sys.executable, str(pathlib.Path(__file__).resolve())]
    relayrl = ["--budget", str(args.budget), "--seed", str(args.seed), "--max-s", str(args.max_s)]
    chosen = [(name, me + ["--run", name] + relayrl) for name in ("relayrl-defaults", "relayrl-lstm", "relayrl-mlp")]
    if args.peers:
        anchors = pathlib.Path(args.anchors)
        chosen += [("sb3-contrib RecurrentPPO", [args.peers, str(anchors / "sb3_recurrent_stateless.py")]),
                   ("sb3-defaults", [args.peers, str(HERE / "peer_sb3_recurrent_defaults.py"),
                                     "--budget", str(args.budget)]),
                   ("RLlib 2.60 LSTM PPO", [args.peers, str(anchors / "rllib_lstm_stateless.py")])]
    skip = {name.strip() for name in args.skip.split(",") if name.strip()}
    return [(name, command) for name, command in chosen if name not in skip]


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.run:
        print("RESULT " + json.dumps(run_relayrl(args.run, args.budget, args.seed, args.max_s)))
        return
    env = dict(os.environ, OMP_NUM_THREADS="1", RAY_ADDRESS="local", ANCHOR_MAX_S=str(args.max_s))
    results = [run_process(name, command, env) for name, command in contestants(args)]
    print("\n" + summary_table(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
