"""`relayrl plot RUN_DIR [--metrics a/b,c/d] [--out FILE.png]`: learning curves from result.json.

Draws `env_runners/episode_return_mean` (and each chosen "/"-path metric, one subplot each)
against `num_env_steps_sampled_lifetime`. matplotlib is imported only when drawing.
"""
from __future__ import annotations

import argparse
import json
import math
import numbers
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence

from relayrl.cli.flags import UserError
from relayrl.core.suggest import did_you_mean

__all__ = ["run_plot", "load_results", "flatten_paths"]

PROG = "relayrl plot"
RESULT_FILE = "result.json"  # same name as relayrl.algorithms.result_logger.RESULT_FILE (no import)
DEFAULT_METRIC = "env_runners/episode_return_mean"
X_KEY = "num_env_steps_sampled_lifetime"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot a run's learning curves (from RUN_DIR/result.json) into a PNG.",
        epilog='example:\n  relayrl plot ~/relayrl_results/PPO_CartPole-v1_2025-01-01_12-00-00 '
               '--metrics learners/default_policy/entropy\n\nneeds matplotlib: pip install "relayrl[plot]"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run's folder (algo.logdir), holding result.json")
    parser.add_argument("--metrics", default="",
                        help=f"comma-separated '/'-paths plotted besides {DEFAULT_METRIC}, "
                             "e.g. learners/default_policy/entropy")
    parser.add_argument("--out", default=None, help="PNG file to write (default RUN_DIR/progress.png)")
    return parser


def _value(value: Any) -> Optional[float]:
    """A plottable float for a logged leaf (None is NaN, "inf"/"-inf" strings); None if not numeric."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return None


def flatten_paths(result: Mapping, prefix: str = "") -> Dict[str, float]:
    """{"a/b": value} for every numeric (or null) leaf of one result line."""
    out: Dict[str, float] = {}
    for key, value in result.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_paths(value, path + "/"))
            continue
        number = _value(value)
        if number is not None:
            out[path] = number
    return out


def load_results(run_dir: str) -> List[Dict[str, float]]:
    """The flattened result lines of RUN_DIR/result.json; UserError if missing or unreadable."""
    if not os.path.isdir(run_dir):
        raise UserError(f"no such run folder: {run_dir}", PROG)
    path = os.path.join(run_dir, RESULT_FILE)
    if not os.path.isfile(path):
        raise UserError(f"no {RESULT_FILE} in {run_dir} (is it a run's logdir?)", PROG)
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(flatten_paths(json.loads(line)))
            except (ValueError, AttributeError) as err:
                raise UserError(f"{path}, line {number}: not a JSON result ({err})", PROG) from None
    if not rows:
        raise UserError(f"{path} holds no results yet", PROG)
    return rows


def _some(available: List[str], metric: str, limit: int = 12) -> str:
    """Up to `limit` available keys, those under the metric's first path part first."""
    head = metric.split("/")[0] + "/"
    keys = [k for k in available if k.startswith(head)] + [k for k in available if not k.startswith(head)]
    text = ", ".join(keys[:limit])
    return text + (f", ... ({len(keys)} in all)" if len(keys) > limit else "")


def run_plot(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    rows = load_results(args.run_dir)
    available = sorted({key for row in rows for key in row})
    chosen = [m.strip() for m in args.metrics.split(",") if m.strip()]
    for metric in chosen:
        if metric not in available:
            raise UserError(f"unknown metric `{metric}`.{did_you_mean(metric, available)} "
                            f"Available: {_some(available, metric)}.", PROG)
    metrics = [DEFAULT_METRIC] if DEFAULT_METRIC in available else []
    metrics += [m for m in chosen if m not in metrics]
    if not metrics:
        raise UserError(f"{DEFAULT_METRIC} is not in the results: choose metrics with --metrics. "
                        f"Available: {_some(available, '')}.", PROG)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError('matplotlib is not installed: pip install "relayrl[plot]"', PROG) from None

    x_key = X_KEY if all(X_KEY in row for row in rows) else "training_iteration"
    xs = [row.get(x_key, i + 1) for i, row in enumerate(rows)]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(8, 3 * len(metrics)), sharex=True, squeeze=False)
    for ax, metric in zip(axes[:, 0], metrics):
        ax.plot(xs, [row.get(metric, math.nan) for row in rows], marker="." if len(rows) < 50 else None)
        ax.set_title(metric)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel(x_key)
    fig.suptitle(os.path.basename(os.path.normpath(args.run_dir)))
    fig.tight_layout()
    out = args.out or os.path.join(args.run_dir, "progress.png")
    try:
        fig.savefig(out, format="png")
    except OSError as err:
        raise UserError(f"cannot write {out}: {err.strerror or err}", PROG) from None
    finally:
        plt.close(fig)
    print(f"wrote {out} ({', '.join(metrics)} vs {x_key}, {len(rows)} iterations)")
    return 0
