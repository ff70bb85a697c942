"""The speed suite: relayrl beside the peers and the raw limits, in one run, on this machine.

    .venv/bin/python benchmarks/run.py [--suite ppo|offpolicy|impala|multiagent|ray|atari|all]
                                       [--peers-python /tmp/peers/bin/python]
                                       [--runs 3] [--quick] [--out benchmarks/results/latest.json]

Suites: "ppo" (the default: PPO to 450, sampler, start-up, learner, connector path), "offpolicy"
(DQN CartPole-v1 to 450 and SAC Pendulum-v1 to -250, RLlib's tuned settings, beside the peers;
about 10-30 minutes), "impala" (IMPALA to 450 within 2M env steps and APPO within 1M on CartPole-v1,
embedded and with 2 remote EnvRunners, beside RLlib's with 2; up to an hour), "multiagent" (PPO with two
policies on two-agent CartPole to a summed 900, relayrl with three settings beside RLlib's tuned example;
about 5-15 minutes), "ray" (start-up and
iteration time with 2 remote EnvRunners vs local), "all".

Peers (RLlib, Stable-Baselines3) run from their own virtual environment through the anchor
scripts in ../shared/anchors; without one, the table shows relayrl and the raw limits only.
The machine may be shared and noisy: compare the ratios of one run, not times across runs.
Times to a return bar run from launching `python` to the iteration that reached it, for relayrl and the
peers alike (imports included, shutdown after it not). PPO CartPole to 450 runs `--runs` times for
relayrl (seeds 0, 1, ...) and for each peer (their anchors are unseeded: step counts vary by 30% or
more); the table compares the median runs and shows the ranges. `--quick` checks that the suite runs
(each figure measured for a moment, no run with the PPO defaults): its numbers are too rough to quote.
"""
import argparse
import compileall
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import threading
import time

from figures import (
    learner_vs_plain_torch,
    raw_limits,
    sampling_figures,
    solve_cartpole,
    startup_s,
)

HERE = pathlib.Path(__file__).resolve().parent
# ../shared/anchors beside the checkout (a git worktree may sit a level deeper); RELAYRL_ANCHORS overrides it.
ANCHORS = pathlib.Path(os.environ.get("RELAYRL_ANCHORS") or next(
    (parent / "shared" / "anchors" for parent in pathlib.Path(__file__).resolve().parents
     if (parent / "shared" / "anchors").is_dir()), pathlib.Path(__file__).resolve().parents[2] / "shared" / "anchors"))
PEER_PPO = {  # anchor script (+ args), run --runs times; its RESULT line gives the figures
    "sb3_ppo": ["sb3_ppo_cartpole.py"],
    "rllib_ppo": ["rllib_ppo_cartpole.py", "0"],  # 0 remote EnvRunners (its argument is not a seed)
}
PEERS = {"rllib_sampler": ["rllib_sampler.py"]}  # run once
ASYNC = {  # algorithm -> (RLlib anchor with 2 runners, bar); relayrl: benchmarks/impala_cartpole.py
    "IMPALA": (["rllib_impala_cartpole.py", "2"], "IMPALA CartPole-v1 to return 450 (budget 2M steps)"),
    "APPO": (["rllib_appo_cartpole.py", "2"], "APPO CartPole-v1 to return 450 (budget 1M steps)"),
}
MULTI_AGENT = ("multi_agent_cartpole.py", ["rllib_ma_cartpole.py", "0"],
               "PPO, two policies, two-agent CartPole to a summed return of 900 (budget 400k env steps)")
MULTI_AGENT_SETTINGS = {"tuned": "relayrl's tuned CartPole example", "default": "relayrl's PPO defaults",
                        "rllib": "RLlib's tuned example settings"}
ATARI = {"sb3": ["sb3_atari_ppo.py"], "rllib": ["rllib_atari_ppo.py"]}  # PPO Pong throughput anchors, 8 envs
OFFPOLICY = {  # task -> (relayrl script, SB3 anchor, RLlib anchor, bar)
    "dqn_cartpole": ("dqn_cartpole.py", ["sb3_offpolicy.py", "dqn"], ["rllib_offpolicy.py", "dqn"],
                     "DQN CartPole-v1 to return 450 (budget 200k steps)"),
    "sac_pendulum": ("sac_pendulum.py", ["sb3_offpolicy.py", "sac"], ["rllib_offpolicy.py", "sac"],
                     "SAC Pendulum-v1 to return -250 (budget 20k steps)"),
}


def run_peer(python: str, script_and_args, timeout_s: float = 900) -> dict:
    """Run one anchor script; parse `key=value` pairs from its RESULT line.

    The anchors' own build_s + train_s leave out their imports, so `wall_s` is also taken here as relayrl's is:
    from launching `python` to the RESULT line (printed as the bar is reached; unbuffered output), which leaves
    out the shutdown after it. `process_s` is launch to exit."""
    start = time.perf_counter()
    proc = subprocess.Popen([python, str(ANCHORS / script_and_args[0]), *script_and_args[1:]], cwd=ANCHORS,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    killer = threading.Timer(timeout_s, proc.kill)
    killer.start()
    lines, result_line, wall_s = [], None, None
    for line in proc.stdout:
        if line.startswith("RESULT") and result_line is None:
            result_line, wall_s = line, time.perf_counter() - start
        lines.append(line)
    proc.wait()
    killer.cancel()
    if result_line is None:
        return {"error": "".join(lines)[-300:] or f"no output (exit code {proc.returncode})"}
    result = {k: _number(v) for k, v in re.findall(r"(\w+)=(\S+)", result_line)}
    result.update(wall_s=wall_s, process_s=time.perf_counter() - start)
    return result


def median_run(runs: list, seconds) -> dict:
    """The middle run by time to the bar (the lower middle for an even count); unsolved runs and errors count
    as slowest. `seconds(run)` gives a run's time."""
    ranked = sorted(runs, key=lambda r: seconds(r) if r.get("solved") else float("inf"))
    return ranked[(len(ranked) - 1) // 2]


def run_relayrl_script(script: str, *args: str, timeout_s: float = 3600) -> dict:
    """Run one of benchmarks/*.py in a fresh interpreter; its `RESULT {json}` line, with wall_s from launch to that
    line (as for the peers: printed when the bar is reached, so the shutdown after it is left out)."""
    start = time.perf_counter()
    # stderr into the same pipe: read as it comes, a chatty stderr cannot fill its pipe and stall the script.
    proc = subprocess.Popen([sys.executable, str(HERE / script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    killer = threading.Timer(timeout_s, proc.kill)
    killer.start()
    lines, line, wall_s = [], None, None
    for out_line in proc.stdout:
        if out_line.startswith("RESULT") and line is None:
            line, wall_s = out_line, time.perf_counter() - start
        lines.append(out_line)
    proc.wait()
    killer.cancel()
    if line is None:
        return {"error": "".join(lines)[-300:]}
    result = json.loads(line.split("RESULT ", 1)[1])
    result["wall_s"] = wall_s
    result["process_s"] = time.perf_counter() - start
    return result


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return {"True": True, "False": False}.get(text, text)


def precompile() -> None:
    """Byte-compile relayrl and the examples once, as `pip install` does for an installed package, so the timed
    runs do not compile source on import (an editable install under PYTHONDONTWRITEBYTECODE would, every run)."""
    for folder in (HERE.parent / "relayrl", HERE.parent / "examples"):
        compileall.compile_dir(str(folder), quiet=1)


def _seconds_to_bar(result: dict) -> float:
    """Seconds to the bar from `python` start (wall_s); for a peer in JSON files from before wall_s was
    taken, its own build_s + train_s."""
    return result.get("wall_s") or result["train_s"] + result.get("build_s", 0)


def measure(peers_python, suite: str = "ppo", runs: int = 3, quick: bool = False) -> dict:
    precompile()
    figures = {"machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
                          f"Python {platform.python_version()}", "suite": suite, "quick": quick}
    if suite in ("offpolicy", "all"):
        figures["offpolicy"] = measure_offpolicy(peers_python)
    if suite in ("impala", "all"):
        figures["impala"] = measure_async(peers_python)
    if suite in ("multiagent", "all"):
        figures["multi_agent"] = measure_multi_agent(peers_python)
    if suite in ("ray", "all"):
        figures["ray"] = run_relayrl_script("ray_overhead.py")
    if suite == "atari":  # not in "all": it needs the atari extra here and ale-py in the peers' venv
        figures["atari"] = measure_atari(peers_python, runs)
    if suite not in ("ppo", "all"):
        return figures
    # --quick shortens each figure's measurement; otherwise every figure runs with its own defaults.
    brief, once = ({"seconds": 0.2}, {"repeats": 1}) if quick else ({}, {})
    figures["raw"] = raw_limits(**brief)
    sampling = sampling_figures(**({"seconds": 0.2, "rounds": 1} if quick else {}))
    figures["raw"]["vec8_sps"] = sampling.pop("vec8_sps")
    figures.update(sampling)
    figures["startup_s"] = startup_s(**once)
    figures["learner"] = learner_vs_plain_torch(**once)
    figures["solve_cartpole_runs"] = [solve_cartpole(seed=seed) for seed in range(runs)]
    figures["solve_cartpole"] = median_run(figures["solve_cartpole_runs"], _seconds_to_bar)
    if not quick:
        figures["solve_cartpole_defaults"] = solve_cartpole(seed=0, settings="default")
    if peers_python:
        figures["peers"] = {name: run_peer(peers_python, args) for name, args in PEERS.items()}
        for name, args in PEER_PPO.items():
            peer_runs = figures["peers"][name + "_runs"] = [run_peer(peers_python, args) for _ in range(runs)]
            figures["peers"][name] = median_run(peer_runs, _seconds_to_bar)
    return figures


def measure_async(peers_python) -> dict:
    out = {}
    for algo, (rllib_anchor, _) in ASYNC.items():
        out[algo] = {f"relayrl_{n}": run_relayrl_script("impala_cartpole.py", "--algo", algo, "--runners", str(n))
                     for n in (0, 2)}
        if peers_python:
            out[algo]["rllib_2"] = run_peer(peers_python, rllib_anchor, timeout_s=1800)
    return out


def measure_multi_agent(peers_python) -> dict:
    script, rllib_anchor, _ = MULTI_AGENT
    out = {f"relayrl_{settings}": run_relayrl_script(script, "--settings", settings)
           for settings in MULTI_AGENT_SETTINGS}
    if peers_python:
        out["rllib"] = run_peer(peers_python, rllib_anchor, timeout_s=1800)
    return out


def multi_agent_rows(f: dict) -> list:
    _, _, work = MULTI_AGENT
    runs = f.get("multi_agent", {})
    rllib, rows = runs.get("rllib", {}), []
    for settings, label in MULTI_AGENT_SETTINGS.items():
        mine, ratios = runs.get(f"relayrl_{settings}"), []
        if not mine:
            continue
        if mine.get("solved") and "train_s" in rllib:
            ratios.append(f"{_seconds_to_bar(rllib) / mine['wall_s']:.1f}x faster than RLlib"
                          + ("" if rllib.get("solved") else " (RLlib did not reach 900)"))
            if "sps" in rllib:
                ratios.append(f"{mine['env_steps_per_s'] / rllib['sps']:.1f}x its env steps/s "
                              f"({mine['env_steps_per_s']:,.0f} vs {rllib['sps']:,.0f})")
        rows.append((f"{work}, relayrl with {label}, wall s from `python` start (env steps)", _time_to_bar(mine),
                     "-", _time_to_bar(rllib), "-", ", ".join(ratios) or "-"))
    return rows


# relayrl's Pong runs: its defaults (no speed setting: it picks ale-py's threaded vector env and a Learner on the
# usable cores), and the settings that were the defaults before 2026-12-04 (SYNC, one Learner thread).
ATARI_RELAYRL = {"relayrl": (), "relayrl_1_thread": ("--learner-cpus", "1"),
                 "relayrl_sync_1thread": ("--vectorize-mode", "SYNC", "--learner-cpus", "1")}


def measure_atari(peers_python, rounds: int = 1) -> dict:
    """Each round runs every library once, in turn (a load that comes and goes hits them alike); per library the
    median round by env steps/s, and each round's runs under "rounds" (the table's ratios are the median of the
    per-round ratios)."""
    runners = {name: (lambda args=args: run_relayrl_script("atari_ppo.py", *args))
               for name, args in ATARI_RELAYRL.items()}
    for name, anchor in (ATARI.items() if peers_python else ()):
        runners[name] = lambda anchor=anchor: run_peer(peers_python, anchor, timeout_s=1200)
    out = {"rounds": [{name: run() for name, run in runners.items()} for _ in range(rounds)]}
    for name in runners:
        ranked = sorted((r[name] for r in out["rounds"]), key=lambda run: run.get("sps", 0))
        out[name] = ranked[(len(ranked) - 1) // 2]
    return out


def _median_round_ratio(rounds: list, mine: str, peer: str):
    ratios = sorted(r[mine]["sps"] / r[peer]["sps"] for r in rounds if r[mine].get("sps") and r[peer].get("sps"))
    return (ratios[(len(ratios) - 1) // 2], ratios[0], ratios[-1]) if ratios else None


def atari_rows(f: dict) -> list:
    runs = f.get("atari", {})
    sb3, rllib = runs.get("sb3", {}), runs.get("rllib", {})
    rounds = runs.get("rounds") or [runs]  # (JSON files from before the rounds: one)
    labels = {"relayrl": "PPO ALE/Pong-v5, 8 envs, env steps/s (sampling + learning), relayrl's defaults",
              "relayrl_1_thread": "same, with num_cpus_per_learner=1 (one torch thread: the default until 2026-12-05)",
              "relayrl_sync_1thread": "same, relayrl with SYNC and num_cpus_per_learner=1 (the defaults before)"}
    rows = []
    for name, label in labels.items():
        mine = runs.get(name, {})
        if "sps" not in mine:
            rows.append((label, mine.get("error", "-")[:60], "-", "-", "-", "-"))
            continue
        ratios = []
        for peer_name, peer in (("SB3", "sb3"), ("RLlib", "rllib")):
            ratio = _median_round_ratio(rounds, name, peer)
            if ratio:
                ratios.append(f"{ratio[0]:.1f}x {peer_name}" + (f" ({ratio[1]:.1f}-{ratio[2]:.1f}x over "
                                                                 f"{len(rounds)} rounds)" if len(rounds) > 1 else ""))
        rows.append((label, f"{mine['sps']:,.0f}", f"{sb3['sps']:,.0f}" if sb3.get("sps") else "-",
                     f"{rllib['sps']:,.0f}" if rllib.get("sps") else "-", "-", ", ".join(ratios) or "-"))
    return rows


def async_rows(f: dict) -> list:
    rows = []
    for algo, (_, work) in ASYNC.items():
        runs = f.get("impala", {}).get(algo, {})
        rllib = runs.get("rllib_2", {})
        for n in (0, 2):
            mine = runs.get(f"relayrl_{n}", {})
            ratios = []
            if mine.get("solved") and "train_s" in rllib:
                speed = f"{rllib['sps']:,.0f}" if "sps" in rllib else "?"
                ratios.append(f"{_seconds_to_bar(rllib) / mine['wall_s']:.1f}x faster than RLlib"
                              + ("" if rllib.get("solved") else " (RLlib did not reach 450)"))
                ratios.append(f"{mine['sps'] / rllib['sps']:.1f}x its env steps/s ({mine['sps']:,.0f} vs {speed})"
                              if "sps" in rllib else "")
            where = "embedded" if n == 0 else f"{n} remote EnvRunners (RLlib: {n} + 1 Learner)"
            rows.append((f"{work}, {where}, wall s from `python` start (env steps)", _time_to_bar(mine), "-",
                         _time_to_bar(rllib) if n == 2 else "-", "-", ", ".join(r for r in ratios if r) or "-"))
    return rows


def measure_offpolicy(peers_python) -> dict:
    out = {}
    for task, (script, sb3_anchor, rllib_anchor, _) in OFFPOLICY.items():
        # relayrl twice: with the peers' settings (RLlib's tuned example) and with its own defaults.
        out[task] = {"relayrl": run_relayrl_script(script),
                     "relayrl_defaults": run_relayrl_script(script, "--settings", "default")}
        if peers_python:
            out[task]["sb3"] = run_peer(peers_python, sb3_anchor)
            out[task]["rllib"] = run_peer(peers_python, rllib_anchor)
    return out


def _time_to_bar(result: dict) -> str:
    """"wall s (steps)": wall time from `python` start (a peer's build_s + train_s in older JSON files)."""
    if not result or "steps" not in result or not (result.get("wall_s") or "train_s" in result):
        return "-" if not result else "error"
    return f"{_seconds_to_bar(result):.1f} s ({result['steps']:,.0f})" + ("" if result.get("solved") else " NOT SOLVED")


def offpolicy_rows(f: dict) -> list:
    rows = []
    for task, (_, _, _, work) in OFFPOLICY.items():
        runs = f.get("offpolicy", {}).get(task, {})
        for key, settings in (("relayrl", "RLlib's tuned settings"), ("relayrl_defaults", "relayrl's defaults")):
            if key not in runs:
                continue  # JSON files from before the defaults row
            mine, ratios = runs[key], []
            for peer, label in (("sb3", "SB3"), ("rllib", "RLlib")):
                other = runs.get(peer, {})
                if "wall_s" in mine and "train_s" in other and mine.get("solved") and other.get("solved"):
                    ratios.append(f"{_seconds_to_bar(other) / mine['wall_s']:.1f}x faster than {label}")
                elif "wall_s" in mine and "train_s" in other and mine.get("solved") and not other.get("solved"):
                    ratios.append(f"> {_seconds_to_bar(other) / mine['wall_s']:.1f}x faster than {label} "
                                  f"({label} did not reach the bar)")
            rows.append((f"{work}, relayrl with {settings}, wall s from `python` start (env steps)",
                         _time_to_bar(mine), _time_to_bar(runs.get("sb3")), _time_to_bar(runs.get("rllib")), "-",
                         ", ".join(ratios) or "-"))
    return rows


def ray_rows(f: dict) -> list:
    r = f.get("ray")
    if not r or "error" in r:
        return []
    return [("Ray path: " + ", ".join(f"{k} {v}" for k, v in r.items() if k != "benchmark"), "-", "-", "-", "-", "-")]


def table_rows(f: dict) -> list:
    rows = offpolicy_rows(f) if "offpolicy" in f else []
    rows += async_rows(f) if "impala" in f else []
    rows += multi_agent_rows(f) if "multi_agent" in f else []
    rows += ray_rows(f)
    rows += atari_rows(f) if "atari" in f else []
    if "solve_cartpole" not in f:
        return rows
    return rows + ppo_rows(f)


def ppo_rows(f: dict) -> list:
    """(work, relayrl, SB3, RLlib, raw limit, ratios) rows of the speed tables of docs/benchmarks.md."""
    peers = f.get("peers", {})
    sb3, rllib, sampler = peers.get("sb3_ppo", {}), peers.get("rllib_ppo", {}), peers.get("rllib_sampler", {})
    solve = f["solve_cartpole"]
    rows = []
    sb3_total = _seconds_to_bar(sb3) if "train_s" in sb3 else None
    rllib_total = _seconds_to_bar(rllib) if "train_s" in rllib else None
    ratio = []
    if sb3_total:
        ratio.append(f"{sb3_total / solve['wall_s']:.1f}x faster than SB3")
    if rllib_total:
        ratio.append(f"{rllib_total / solve['wall_s']:.1f}x faster than RLlib")
    relayrl_runs = f.get("solve_cartpole_runs", [])
    sb3_runs = [r for r in peers.get("sb3_ppo_runs", []) if "train_s" in r]
    rllib_runs = [r for r in peers.get("rllib_ppo_runs", []) if "train_s" in r]
    rows.append(("PPO CartPole-v1 to return 450, each library's tuned CartPole settings, wall s from `python` "
                 "start (env steps)" + (f"; median of {len(relayrl_runs)} runs" if len(relayrl_runs) > 1 else ""),
                 _solve_cell(solve) + _range(relayrl_runs, _seconds_to_bar),
                 _time_to_bar(sb3) + _range(sb3_runs, _seconds_to_bar),
                 _time_to_bar(rllib) + _range(rllib_runs, _seconds_to_bar),
                 "-", ", ".join(ratio) or "-"))
    defaults = f.get("solve_cartpole_defaults")
    if defaults:
        rows.append(("same, relayrl's PPO defaults", _solve_cell(defaults), "-", "-", "-",
                     f"{sb3_total / defaults['wall_s']:.1f}x faster than SB3" if sb3_total else "-"))
    raw = f["raw"]
    rows.append(("EnvRunner sampling, CartPole-v1, 8 envs, default PPO module, explore (env steps/s)",
                 f"{f['sampler_sps']:,.0f}", "-", f"{sampler['sps']:,.0f}" if "sps" in sampler else "-",
                 f"{raw['vec8_sps']:,.0f} (sync vector env of 8)",
                 f"{f['sampler_sps'] / raw['vec8_sps']:.0%} of raw"))
    torch_path = f.get("sampler_torch_path_sps")
    if torch_path:
        rows.append(("same, inference on the torch module (`numpy_inference=False`)", f"{torch_path:,.0f}", "-", "-",
                     "-", f"{torch_path / raw['vec8_sps']:.0%} of raw; numpy inference "
                          f"{f['sampler_sps'] / torch_path:.2f}x faster"))
    general = f["sampler_general_path_sps"]
    rows.append(("same, with a custom env-to-module piece (general path)", f"{general:,.0f}", "-", "-", "-",
                 f"{f['sampler_sps'] / general:.2f}x slower than the fast path"))
    floors = [("numpy", f.get("sampler_numpy_floor_sps"), f["sampler_sps"], "relayrl"),
              ("torch", f.get("sampler_floor_sps"), torch_path, "relayrl with torch inference")]
    for network, floor, ours, who in floors:
        if floor:
            rows.append((f"The sampling work as one bare loop of {network} calls writing numpy columns, with no "
                         f"episodes, connectors or RLModule (the floor for {network} + gymnasium)", "-", "-", "-",
                         f"{floor:,.0f} (bare loop)", f"floor {floor / raw['vec8_sps']:.0%} of raw"
                         + (f"; {who} {ours / floor:.0%} of the floor" if ours else "")))
    rows.append(("Start-up: `import relayrl` to first train() result (s)", f"{f['startup_s']:.2f}", "-",
                 f"{rllib['build_s']:.1f} (build only)" if "build_s" in rllib else "-", "-", "target < 1.5 s"))
    lr = f["learner"]
    rows.append(("PPO learner minibatch updates/s (same net, batch, minibatches)",
                 f"{lr['relayrl_updates_per_s']:,.0f}", "-", "-",
                 f"{lr['plain_torch_updates_per_s']:,.0f} (plain torch)",
                 f"{lr['relayrl_updates_per_s'] / lr['plain_torch_updates_per_s']:.0%} of plain torch"))
    rows.append(("Raw: gymnasium CartPole-v1, one env (steps/s); 64x64 MLP batch 8 (forwards/s)", "-", "-", "-",
                 f"{raw['single_env_sps']:,.0f}; {raw['mlp_fwd_per_s']:,.0f}", "-"))
    return rows


def _range(runs: list, seconds) -> str:
    """"; runs 3.1-3.4 s, 61-67k steps" over several runs (unsolved ones named), or "" for one run."""
    if len(runs) < 2:
        return ""
    solved = [r for r in runs if r.get("solved")]
    text = f"; runs {min(map(seconds, solved)):.1f}-{max(map(seconds, solved)):.1f} s, " \
           f"{min(r['steps'] for r in solved) / 1000:.0f}-{max(r['steps'] for r in solved) / 1000:.0f}k steps" \
        if solved else "; no run solved"
    return text + (f", {len(runs) - len(solved)} not solved" if solved and len(solved) < len(runs) else "")


def _solve_cell(solve: dict) -> str:
    """"wall s (steps)" plus where the training time went (sampling, learner updates)."""
    cell = _time_to_bar(solve)
    if "sampling_s" in solve:
        cell += f"; sampling {solve['sampling_s']:.1f} s, learning {solve['learning_s']:.1f} s"
    return cell


def print_heading(figures: dict) -> None:
    print(f"Machine: {figures['machine']}")
    if figures.get("quick"):
        print("A --quick run: each figure was measured for a moment; the numbers are too rough to quote.")


def print_table(rows) -> str:
    header = ("work", "relayrl", "Stable-Baselines3", "RLlib", "raw limit", "ratio")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    text = "\n".join(lines)
    print(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_peers = "/tmp/peers/bin/python" if pathlib.Path("/tmp/peers/bin/python").exists() else None
    parser.add_argument("--peers-python", default=default_peers,
                        help="python of a venv with ray[rllib] and stable-baselines3 (see ../shared/anchors)")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--suite", choices=("ppo", "offpolicy", "impala", "multiagent", "ray", "atari", "all"), default="ppo")
    parser.add_argument("--runs", type=int, default=3, help="PPO CartPole to 450 runs for relayrl and SB3 (median); atari: interleaved rounds")
    parser.add_argument("--quick", action="store_true",
                        help="check that the suite runs: each figure measured briefly, too rough to quote")
    parser.add_argument("--table-from", type=pathlib.Path, default=None,
                        help="print the table of an earlier run's JSON file instead of measuring")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent / "results" / "latest.json")
    args = parser.parse_args(argv)
    if args.table_from:
        figures = json.loads(args.table_from.read_text())
        print_heading(figures)
        print_table(table_rows(figures))
        return figures
    if args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    figures = measure(None if args.no_peers else args.peers_python, args.suite, args.runs, args.quick)
    print_heading(figures)
    figures["table_markdown"] = print_table(table_rows(figures))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2))
    print(f"JSON: {args.out}")
    return figures


if __name__ == "__main__":
    main()
