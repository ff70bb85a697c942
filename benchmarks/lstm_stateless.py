"""Memory, side by side in one run: wall time from process start to a mean return of 350 on StatelessCartPole
(CartPole without the velocities, TimeLimit 500), each contestant in its own process, one after the other.

- relayrl PPO with use_lstm=True (`--run relayrl-lstm`; the settings are LSTM_PPO below);
- relayrl PPO with the same settings and a plain MLP instead of the LSTM (`--run relayrl-mlp`): the same env
  and budget, to show that memory is what solves it;
- sb3-contrib's RecurrentPPO with rl-zoo's CartPoleNoVel-v1 settings (../shared/anchors/sb3_recurrent_stateless.py);
- RLlib 2.60's LSTM PPO example (../shared/anchors/rllib_lstm_stateless.py).

Usage: python benchmarks/lstm_stateless.py [--peers PEER_PYTHON] [--anchors DIR] [--budget STEPS] [--peer-max-s S]
                                          [--skip NAMES] [--out FILE]
Prints one RESULT json line per contestant and a summary table; `--run NAME` runs one relayrl contestant in this
process (what the driver calls). Wall seconds include imports and start-up (subprocess start to exit).
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
    from relayrl.connectors import MeanStdFilter
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


def _mean_std_filter(env=None, spaces=None, device=None):
    from relayrl.connectors import MeanStdFilter

    return MeanStdFilter()


def run_relayrl(name: str, budget: int, seed: int) -> dict:
    start = time.perf_counter()
    algo = lstm_ppo_config(use_lstm=name == "relayrl-lstm", seed=seed).build_algo()
    best, ret, steps = float("-inf"), float("nan"), 0
    try:
        while True:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if result["training_iteration"] % 40 == 0:
                print(f"steps={steps} return={ret:.1f} t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= TARGET or steps >= budget:
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
    print("RESULT " + json.dumps(summary), flush=True)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", choices=["relayrl-lstm", "relayrl-mlp"])
    parser.add_argument("--peers", default="/tmp/peers/bin/python", help="the peers' venv python ('' skips)")
    parser.add_argument("--anchors", default=next((str(p) for p in ANCHOR_DIRS if p.is_dir()), str(ANCHOR_DIRS[0])))
    parser.add_argument("--budget", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peer-max-s", type=float, default=600.0,
                        help="stop a peer after this many seconds (ANCHOR_MAX_S); it then reports solved=False")
    parser.add_argument("--skip", default="", help="comma-separated contestants to leave out")
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args()
    if args.run:
        print("RESULT " + json.dumps(run_relayrl(args.run, args.budget, args.seed)))
        return
    env = dict(os.environ, OMP_NUM_THREADS="1", RAY_ADDRESS="local", ANCHOR_MAX_S=str(args.peer_max_s))
    me = [sys.executable, str(pathlib.Path(__file__).resolve())]
    contestants = [("relayrl-lstm", me + ["--run", "relayrl-lstm", "--budget", str(args.budget),
                                          "--seed", str(args.seed)]),
                   ("relayrl-mlp", me + ["--run", "relayrl-mlp", "--budget", str(args.budget),
                                         "--seed", str(args.seed)])]
    if args.peers:
        anchors = pathlib.Path(args.anchors)
        contestants += [("sb3-contrib RecurrentPPO", [args.peers, str(anchors / "sb3_recurrent_stateless.py")]),
                        ("RLlib 2.60 LSTM PPO", [args.peers, str(anchors / "rllib_lstm_stateless.py")])]
    skip = {name.strip() for name in args.skip.split(",") if name.strip()}
    results = [run_process(name, command, env) for name, command in contestants if name not in skip]
    print("\n| contestant | wall s (process start to exit) | RESULT |\n|---|---|---|")
    for r in results:
        print(f"| {r['name']} | {r['wall_s']} | {r.get('result') or r.get('error', '')[-120:]} |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
