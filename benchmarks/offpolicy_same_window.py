"""DQN CartPole-v1 to 450 and SAC Pendulum-v1 to -250 with one metric for every library: the mean return of
the last N episodes (100 for DQN, 10 for SAC by default), side by side in one run.

    .venv/bin/python benchmarks/offpolicy_same_window.py [--tasks dqn_cartpole sac_pendulum]
        [--settings default|rllib] [--runs 1] [--first-seed 0] [--peers sb3 rllib] [--learner-cpus N]
        [--peers-python /tmp/peers/bin/python]

`benchmarks/run.py --suite offpolicy` stops each library on its own reported mean return, and those differ:
RLlib 2.60's averages only the episodes that ended in that iteration (usually one for DQN and SAC, so a run
stops at its first episode at the bar), SB3's anchor the last 20 (DQN) or 5 (SAC), relayrl's the last
`metrics_num_episodes_for_smoothing`. Here relayrl runs benchmarks/dqn_cartpole.py / sac_pendulum.py with
`--window N`, and the peers' anchors run through benchmarks/peer_same_window.py, which makes them stop on the
same last-N mean without changing their settings. Times run from launching `python` to the RESULT line
(imports included), as in run.py. relayrl runs with seeds 0.. and the peers' anchors unseeded, `--runs` times
each, alternating (relayrl, SB3, RLlib, relayrl, ...) so load drifts hit all alike; the medians are compared.
Prints one table and a `RESULT {json}` line.
"""
import argparse
import json
import pathlib
import statistics

from run import ANCHORS, HERE, precompile, run_peer, run_relayrl_script

TASKS = {  # task -> (relayrl script, anchor argument, default window, bar)
    "dqn_cartpole": ("dqn_cartpole.py", "dqn", 100, "DQN CartPole-v1 to 450 (budget 200k env steps)"),
    "sac_pendulum": ("sac_pendulum.py", "sac", 10, "SAC Pendulum-v1 to -250 (budget 20k env steps)"),
}
PEERS = {"sb3": "sb3_offpolicy.py", "rllib": "rllib_offpolicy.py"}


def _seconds(run: dict) -> float:
    """Launch to the RESULT line; an unsolved run or an error counts as never."""
    return run["wall_s"] if run.get("solved") and "wall_s" in run else float("inf")


def _cell(runs: list) -> str:
    if not runs:
        return "-"
    median = statistics.median_low([_seconds(r) for r in runs])
    solved = [r for r in runs if r.get("solved")]
    steps = ", ".join(f"{r['steps']:,.0f}" for r in solved)
    unsolved = len(runs) - len(solved)
    if median == float("inf"):
        budgets = ", ".join(f"{r['steps']:,.0f}" for r in runs if "steps" in r)
        return f"not reached ({budgets} env steps)" if budgets else "error"
    return f"{median:.1f} s ({steps} env steps)" + (f", {unsolved} of {len(runs)} not reached" if unsolved else "")


def measure(tasks, settings: str, runs: int, windows: dict, peers_python, peers=tuple(PEERS), first_seed=0,
            learner_cpus=None) -> dict:
    out = {}
    peers = {peer: PEERS[peer] for peer in peers} if peers_python else {}
    for task in tasks:
        script, anchor_arg, _, _ = TASKS[task]
        window = windows[task]
        results = out[task] = {"window": window, "relayrl": [], **{peer: [] for peer in peers}}
        for i in range(runs):
            threads = ["--learner-cpus", str(learner_cpus)] if learner_cpus and task == "sac_pendulum" else []
            mine = run_relayrl_script(script, "--settings", settings, "--seed", str(first_seed + i),
                                      "--window", str(window), *threads)
            results["relayrl"].append(mine)
            print(task, "relayrl", json.dumps(mine), flush=True)
            for peer, anchor in peers.items():
                run = run_peer(peers_python, [str(HERE / "peer_same_window.py"), "--window", str(window),
                                              str(ANCHORS / anchor), anchor_arg], timeout_s=2400)
                results[peer].append(run)
                print(task, peer, json.dumps(run), flush=True)
    return out


def table(figures: dict, settings: str) -> str:
    lines = ["| work (mean of the last N episodes) | relayrl | Stable-Baselines3 | RLlib | ratio |",
             "|---|---|---|---|---|"]
    for task, results in figures.items():
        mine = statistics.median_low([_seconds(r) for r in results["relayrl"]])
        ratios = []
        for peer, label in (("sb3", "SB3"), ("rllib", "RLlib")):
            if results.get(peer):
                theirs = statistics.median_low([_seconds(r) for r in results[peer]])
                if mine != float("inf") and theirs != float("inf"):
                    ratios.append(f"{theirs / mine:.1f}x faster than {label}")
                elif mine != float("inf"):
                    longest = max(r.get("wall_s", 0) for r in results[peer])
                    ratios.append(f"> {longest / mine:.1f}x faster than {label} ({label} did not reach the bar)")
        lines.append(f"| {TASKS[task][3]}, N={results['window']}, relayrl with its {settings} settings | "
                     f"{_cell(results['relayrl'])} | {_cell(results.get('sb3', []))} "
                     f"| {_cell(results.get('rllib', []))} "
                     f"| {', '.join(ratios) or '-'} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", choices=tuple(TASKS), default=list(TASKS))
    parser.add_argument("--settings", choices=("default", "rllib"), default="default",
                        help="relayrl's own defaults, or RLlib's tuned examples (the peers' settings)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0, help="relayrl's seed in the first run (then +1 per run)")
    parser.add_argument("--dqn-window", type=int, default=TASKS["dqn_cartpole"][2])
    parser.add_argument("--sac-window", type=int, default=TASKS["sac_pendulum"][2])
    default_peers = "/tmp/peers/bin/python" if pathlib.Path("/tmp/peers/bin/python").exists() else None
    parser.add_argument("--peers-python", default=default_peers)
    parser.add_argument("--peers", nargs="+", choices=tuple(PEERS), default=list(PEERS),
                        help="which peers to run (e.g. --peers rllib: SB3's DQN does not reach 450 within 200k)")
    parser.add_argument("--learner-cpus", type=int, default=None,
                        help="SAC only: relayrl's num_cpus_per_learner (its Learner's torch threads; SB3's torch "
                             "uses every core)")
    args = parser.parse_args(argv)
    if args.runs < 1 or min(args.dqn_window, args.sac_window) < 1:
        parser.error("--runs and the windows must be at least 1")
    windows = {"dqn_cartpole": args.dqn_window, "sac_pendulum": args.sac_window}
    precompile()
    figures = measure(args.tasks, args.settings, args.runs, windows, args.peers_python, args.peers, args.first_seed,
                      args.learner_cpus)
    text = table(figures, args.settings)
    print(text)
    print("RESULT " + json.dumps({"settings": args.settings, "figures": figures}))
    return figures


if __name__ == "__main__":
    main()
