"""The EnvRunner's sampling speed at two versions of relayrl, measured in one run: before/after a change.

    .venv/bin/python benchmarks/sampler_ab.py --before /tmp/relayrl_base [--after .] [--rounds 6] [--seconds 2]

`--before` / `--after` are source trees (a checkout or `git archive` of relayrl: the folder holding
`relayrl/` and `benchmarks/`). Each round runs one fresh interpreter per tree, alternating which goes
first; each measures the raw sync vector env of 8 CartPole-v1 and the sampler rows of
`benchmarks/figures.py` (default path, torch inference, general path) in interleaved windows, so a
drift in the machine's speed moves them alike. The figure compared is each row's "% of raw" (sampler
env steps/s over the raw vector env's, same process, same windows); the table gives the median over
rounds of each tree and the after/before ratio. Prints a table and a `RESULT {json}` line.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

ROWS = {  # figures.py meter kwargs per row
    "sampler_sps": {},
    "sampler_torch_path_sps": {"numpy_inference": False},
    "sampler_general_path_sps": {"custom_piece": True},
}

CHILD = """
import json, sys
sys.path[:0] = [{tree!r}, {tree!r} + "/benchmarks"]
import relayrl, torch
assert relayrl.__file__.startswith({tree!r}), relayrl.__file__
from figures import _vec8_meter, _sampler_meter
torch.set_num_threads(1)
meters = {{"vec8_sps": _vec8_meter()}}
meters.update({{name: _sampler_meter(**kwargs) for name, kwargs in {rows!r}.items()}})
windows = {{name: [] for name in meters}}
for _ in range({windows}):
    for name, meter in meters.items():
        windows[name].append(meter({seconds} / {windows}))
print("RESULT " + json.dumps({{name: sorted(rates)[len(rates) // 2] for name, rates in windows.items()}}))
"""


def measure(tree: str, seconds: float, windows: int) -> dict:
    code = CHILD.format(tree=str(pathlib.Path(tree).resolve()), rows=ROWS, seconds=seconds, windows=windows)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.split("RESULT ", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default=str(pathlib.Path(__file__).resolve().parents[1]))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per meter per process")
    parser.add_argument("--windows", type=int, default=3, help="interleaved windows per process")
    args = parser.parse_args()
    runs = {"before": [], "after": []}
    for r in range(args.rounds):
        order = ("before", "after") if r % 2 == 0 else ("after", "before")
        for name in order:
            runs[name].append(measure(getattr(args, name), args.seconds, args.windows))
    summary = {}
    for name, results in runs.items():
        summary[name] = {"vec8_sps": statistics.median(r["vec8_sps"] for r in results)}
        for row in ROWS:
            summary[name][row] = statistics.median(r[row] for r in results)
            summary[name][row + "_pct_of_raw"] = statistics.median(100 * r[row] / r["vec8_sps"] for r in results)
    print(f"{'row':<28}{'before % raw':>14}{'after % raw':>14}{'after/before':>14}   (env steps/s before -> after)")
    for row in ROWS:
        b, a = summary["before"][row + "_pct_of_raw"], summary["after"][row + "_pct_of_raw"]
        print(f"{row:<28}{b:>13.1f}%{a:>13.1f}%{a / b:>14.3f}   "
              f"({summary['before'][row]:,.0f} -> {summary['after'][row]:,.0f})")
    print(f"{'raw vec8':<28}{'':>14}{'':>14}{'':>14}   "
          f"({summary['before']['vec8_sps']:,.0f} -> {summary['after']['vec8_sps']:,.0f})")
    print("RESULT " + json.dumps({"summary": summary, "runs": runs, "rounds": args.rounds}))


if __name__ == "__main__":
    main()
