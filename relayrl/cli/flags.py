"""The `relayrl train ALGO` parser, generated from the config class's `Option` records.

No option is listed here: every option with `cli=True` becomes a flag `--<name>` (also
`--<name-with-dashes>`, the dict key when it differs, e.g. `--lambda`, and deprecated aliases,
hidden), grouped by builder method. Values are parsed and checked by `Option.parse`.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Optional

from relayrl.algorithms.options import short_repr
from relayrl.algorithms.registry import (
    algorithm_names,
    canonical_name,
    get_config_class,
)
from relayrl.algorithms.resolved_defaults import vector_mode
from relayrl.core.suggest import did_you_mean

HELP_FLAGS = ("-h", "--help")


class UserError(Exception):
    """A mistake on the command line: printed as one line, exit status 2, no traceback."""

    def __init__(self, message: str, prog: str = "relayrl train"):
        super().__init__(" ".join(str(message).split()))  # one line
        self.prog = prog


@dataclass
class TrainArgs:
    algorithm: str
    config_class: type
    overrides: dict  # option name -> checked value, only the flags given
    stop_reward: Optional[float] = None
    stop_timesteps: Optional[int] = None
    stop_iters: Optional[int] = None
    json: bool = False
    notes: list = field(default_factory=list)  # e.g. deprecated flag names used
    checkpoint_freq: int = 0  # save every N iterations (0: never during the run)
    checkpoint_at_end: bool = True
    restore: Optional[str] = None  # a checkpoint or run folder to resume from


# -- help formatting -----------------------------------------------------------------------------

def _spelling(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Shows `--name METAVAR`, leaving out the dashed respellings of a flag."""

    def __init__(self, prog):
        super().__init__(prog, max_help_position=36)

    def _format_action_invocation(self, action):
        if not action.option_strings:
            return super()._format_action_invocation(action)
        shown, seen = [], set()
        for flag in action.option_strings:
            if _spelling(flag) not in seen:
                seen.add(_spelling(flag))
                shown.append(flag)
        if action.nargs == 0:
            return ", ".join(shown)
        return ", ".join(shown) + " " + self._format_args(action, self._get_default_metavar_for_optional(action))


_TYPE_NAMES = {int: "INT", float: "FLOAT", bool: "BOOL", dict: "JSON", list: "LIST", str: "STR"}


def _metavar(option) -> str:
    """INT, FLOAT, BOOL, JSON, {a,b}, FLOAT|LIST, ... from the option's type annotation."""
    parts: list = []

    def visit(annotation):
        origin = typing.get_origin(annotation)
        if origin is typing.Union:
            for arg in typing.get_args(annotation):
                visit(arg)
        elif origin is typing.Literal:
            parts.append("{" + ",".join(map(str, typing.get_args(annotation))) + "}")
        elif annotation is not type(None):
            name = _TYPE_NAMES.get(origin or annotation)
            if name and name not in parts:
                parts.append(name)

    visit(option.annotation)
    if not parts or parts == ["STR"]:
        return option.name.rstrip("_").upper()
    return "|".join(parts)


def _help(option) -> str:
    default = option.default
    shown = "{}" if default == {} else short_repr(default, 50)
    if option.name == vector_mode.OPTION:  # picked where it is safe (resolved_defaults/vector_mode.py)
        shown = vector_mode.HELP_DEFAULT
    return f"{option.help} (default: {shown})".replace("%", "%%")  # argparse %-formats help


# -- the parser ----------------------------------------------------------------------------------

class _StoreOption(argparse.Action):
    """Keeps the raw text of a config-option flag; `Option.parse` checks it after parsing."""

    def __init__(self, option_strings, dest, option=None, deprecated=False, **kwargs):
        self.option = option
        self.deprecated = deprecated
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.given[self.option.name] = (option_string, values)
        if self.deprecated:
            namespace.notes.append(f"{option_string} is deprecated: use --{self.option.name}")


def _flags(*words: str) -> list:
    flags: list = []
    for word in words:
        for flag in (f"--{word}", f"--{word.replace('_', '-')}"):
            if flag not in flags:
                flags.append(flag)
    return flags


def _positive_int(text: str) -> int:
    try:
        value = float(text) if any(c in text.lower() for c in ".e") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}") from None
    if not (isinstance(value, int) or (math.isfinite(value) and value.is_integer())) or value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    return int(value)


def _non_negative_int(text: str) -> int:
    if text.strip() in ("0", "0.0"):
        return 0
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected an int >= 0, got {text!r}") from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def build_train_parser(algorithm: str, config_class: type) -> argparse.ArgumentParser:
    prog = f"relayrl train {algorithm}"
    parser = argparse.ArgumentParser(
        prog=prog,
        usage=f"{prog} --env ENV [--stop-reward R] [--stop-timesteps N] [--stop-iters N] "
              "[--json] [--OPTION VALUE ...]",
        description=(
            f"Train {algorithm} until a stop criterion is met (any one of them stops training).\n"
            f"Every {config_class.__name__} option is a flag: --name VALUE or --name-with-dashes "
            "VALUE.\nVALUE is read as JSON or a Python literal (3e-4, true, None, "
            "'[[0, 1e-3], [100000, 1e-4]]',\n'{\"fcnet_hiddens\": [32]}'), else as a string."),
        epilog=(
            "example:\n"
            f"  relayrl train {algorithm} --env CartPole-v1 --stop-reward 450 "
            "--stop-timesteps 300000 --gamma 0.99\n\n"
            "exit status: 0 stop reward reached (or none given), 1 stopped by a budget before "
            "reaching it,\n2 command-line or config error, 130 interrupted (Ctrl-C).\n"
            "Set RELAYRL_TRACEBACK=1 to see the traceback of a config error."),
        formatter_class=_HelpFormatter,
        allow_abbrev=False,  # new options must not silently change what an abbreviation means
    )
    run = parser.add_argument_group("stopping and output")
    run.add_argument("--stop-reward", "--stop_reward", type=_float, metavar="R",
                     help="Stop when the mean episode return reaches R.")
    run.add_argument("--stop-timesteps", "--stop_timesteps", type=_positive_int, metavar="N",
                     help="Stop after N sampled env steps.")
    run.add_argument("--stop-iters", "--stop_iters", type=_positive_int, metavar="N",
                     help="Stop after N training iterations (train() calls).")
    run.add_argument("--json", action="store_true",
                     help="Also print the final summary as one JSON line (last line of stdout).")
    run.add_argument("--checkpoint-freq", "--checkpoint_freq", type=_non_negative_int, default=0, metavar="N",
                     help="Save a checkpoint into the run folder every N iterations (0: only at the end).")
    run.add_argument("--checkpoint-at-end", "--checkpoint_at_end", action=argparse.BooleanOptionalAction,
                     default=True, help="Save a checkpoint into the run folder when training stops (default: yes).")

    run.add_argument("--restore", metavar="CHECKPOINT",
                     help="Resume from a checkpoint, or a run folder's newest checkpoint_*, of the same algorithm: "
                          "weights, optimizer, counters (the stop criteria count from the first run's start).")

    table = config_class._option_table
    for group in table.groups():
        options = [o for o in table.in_group(group) if o.group == group and o.cli]
        if not options:
            continue
        section = parser.add_argument_group(
            f"{group}() options", table.group_help.get(group, f"Sets the {group} options."))
        for option in options:
            boolean = option.annotation is bool
            extra = {"nargs": "?", "const": "true"} if boolean else {}
            section.add_argument(*_flags(option.name, option.dict_key), action=_StoreOption,
                                 option=option, dest=f"option:{option.name}",
                                 default=argparse.SUPPRESS, metavar=_metavar(option),
                                 help=_help(option), **extra)
            if option.aliases:
                section.add_argument(*_flags(*option.aliases), action=_StoreOption, option=option,
                                     deprecated=True, dest=f"option:{option.name}",
                                     default=argparse.SUPPRESS, help=argparse.SUPPRESS, **extra)
    return parser


def _all_flags(parser: argparse.ArgumentParser) -> list:
    return [flag for action in parser._actions for flag in action.option_strings]


def _model_key_hint(arg: str) -> str:
    """`--use_lstm true` names a DefaultModelConfig field, which the CLI takes inside --model_config's JSON."""
    from relayrl.modules.default_model_config import DefaultModelConfig

    name = arg.split("=")[0].lstrip("-").replace("-", "_")
    if name not in {f.name for f in dataclasses.fields(DefaultModelConfig)}:
        return ""
    return f" `{name}` is a model setting: --model_config '{{\"{name}\": VALUE}}' (JSON, e.g. true, 256)."


def parse_train_args(argv: list) -> TrainArgs:
    """Parse `relayrl train ...` arguments (argparse exits on --help and malformed flags)."""
    if not argv or argv[0].startswith("-"):
        default = algorithm_names()[0]
        if any(arg in HELP_FLAGS for arg in argv):  # `relayrl train --help`: the first algorithm's
            build_train_parser(default, get_config_class(default)).print_help()
            raise SystemExit(0)
        raise UserError(f"name the algorithm first: relayrl train ALGO --env ENV ... "
                        f"(available: {', '.join(algorithm_names())})")
    try:
        algorithm = canonical_name(argv[0])
    except ValueError as err:
        raise UserError(str(err)) from None
    config_class = get_config_class(algorithm)
    parser = build_train_parser(algorithm, config_class)
    namespace = argparse.Namespace(given={}, notes=[])
    namespace, extras = parser.parse_known_args(argv[1:], namespace)
    if extras:
        flags = _all_flags(parser)
        hints = "".join(_model_key_hint(arg) or did_you_mean(arg.split("=")[0], flags)
                        for arg in extras if arg.startswith("-"))
        parser.error(f"unrecognized arguments: {' '.join(extras)}.{hints}")

    overrides = {}
    table = config_class._option_table
    for name, (flag, text) in namespace.given.items():
        try:
            overrides[name] = table[name].parse(text)
        except ValueError as err:
            raise UserError(f"{flag} {text}: {err}", prog=parser.prog) from None
    if overrides.get("env", table["env"].default) is None:
        raise UserError("--env is required, e.g. --env CartPole-v1", prog=parser.prog)
    return TrainArgs(algorithm, config_class, overrides, namespace.stop_reward,
                     namespace.stop_timesteps, namespace.stop_iters, namespace.json, namespace.notes,
                     namespace.checkpoint_freq, namespace.checkpoint_at_end, namespace.restore)
