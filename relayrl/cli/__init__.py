"""The `relayrl` command line: `relayrl train PPO --env CartPole-v1 --stop-reward 450 ...`.

Importing this package is light (no torch, no rich): the algorithm's config class is imported
when its flags are needed and the algorithm itself when training starts.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from relayrl.algorithms.registry import algorithm_names
from relayrl.core.suggest import did_you_mean

__all__ = ["main"]

COMMANDS = {
    "train": "Train an algorithm on an env until a stop criterion is met.",
    "plot": "Plot a run's learning curves (RUN_DIR/result.json) into a PNG.",
    "evaluate": "Run a checkpoint's policy: print the returns, record videos.",
}


def _top_parser() -> argparse.ArgumentParser:
    from relayrl import __version__

    parser = argparse.ArgumentParser(
        prog="relayrl",
        description="relayrl: RLlib's API (new API stack), fast on one machine.",
        epilog=(f"algorithms: {', '.join(algorithm_names())}\n\n"
                "example:\n  relayrl train PPO --env CartPole-v1 --stop-reward 450 "
                "--stop-timesteps 300000\n  relayrl plot ~/relayrl_results/PPO_CartPole-v1_<time>\n\n"
                "`relayrl train ALGO --help` lists every config option of ALGO as a flag."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"relayrl {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        commands.add_parser(name, help=text, add_help=False)
    return parser


# Subcommand -> (module, function); imported on use so `relayrl --help` stays light.
_COMMANDS = {"train": ("relayrl.cli.train", "run_train"), "plot": ("relayrl.cli.plot", "run_plot"),
             "evaluate": ("relayrl.cli.evaluate", "run_evaluate")}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in _COMMANDS:
            import importlib

            from relayrl.cli.flags import UserError

            module_name, function = _COMMANDS[argv[0]]
            try:
                return getattr(importlib.import_module(module_name), function)(argv[1:])
            except UserError as err:
                print(f"{err.prog}: error: {err}", file=sys.stderr)
                return 2
        parser = _top_parser()
        if not argv:
            parser.print_help(sys.stderr)
            return 2
        if not argv[0].startswith("-") and argv[0] not in COMMANDS:
            parser.error(f"unknown command `{argv[0]}`.{did_you_mean(argv[0], COMMANDS)} "
                         f"Commands: {', '.join(COMMANDS)}.")
        parser.parse_args(argv)  # --help, --version and malformed calls exit here
        return 0
    except SystemExit as exit_:  # argparse's --help (0) and usage errors (2)
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
