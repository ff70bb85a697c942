"""What `relayrl train` prints: a live one-line progress display and a summary table on a
terminal; plain lines (one per iteration, no ANSI codes) otherwise, e.g. in CI logs."""
from __future__ import annotations

import contextlib
import math
import sys
from typing import Optional

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from relayrl.cli.train import STOP_REASONS, Run

# Learner stats shown first when present; the module's other scalar stats follow.
_MAIN_STATS = ("total_loss", "policy_loss", "vf_loss", "entropy", "mean_kl_loss")


def _num(value: float, digits: int = 2) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:,.{digits}f}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _env_name(run: Run) -> str:
    return run.env if isinstance(run.env, str) else getattr(run.env, "__name__", repr(run.env))


def _iterations(run: Run) -> str:
    return f"{run.iteration}/{run.stop_iters}" if run.stop_iters else str(run.iteration)


def _steps(run: Run) -> str:
    if not run.stop_timesteps:
        return f"{run.env_steps:,}"
    share = 100.0 * run.env_steps / run.stop_timesteps
    return f"{run.env_steps:,} ({share:.0f}% of {run.stop_timesteps:,})"


def _returns(run: Run) -> str:
    return f"{_num(run.return_mean)} (best {_num(run.best_return)})"


def _stop_criteria(run: Run) -> str:
    parts = []
    if run.stop_reward is not None:
        parts.append(f"mean return >= {run.stop_reward:g}")
    if run.stop_timesteps:
        parts.append(f"{run.stop_timesteps:,} env steps")
    if run.stop_iters:
        parts.append(f"{run.stop_iters} iterations")
    return "stop at " + " or ".join(parts) if parts else "no stop criterion: Ctrl-C stops"


def summary_rows(run: Run) -> list:
    reward = "none given"
    if run.stop_reward is not None:
        reward = f"{run.stop_reward:g} ({'reached' if run.reached_stop_reward else 'not reached'})"
    return [
        ("algorithm", run.algorithm),
        ("env", _env_name(run)),
        ("iterations", _iterations(run)),
        ("env steps", _steps(run)),
        ("final mean return", _num(run.return_mean)),
        ("best mean return", _num(run.best_return)),
        ("stop reward", reward),
        ("stopped by", STOP_REASONS.get(run.stopped_by, "-")),
        ("build time", _duration(run.build_time_s)),
        ("training time", _duration(run.train_time_s)),
        ("env steps/s", _num(run.steps_per_s, 0)),
        ("vector env", run.vector_mode or "-"),
    ]


def learner_rows(run: Run) -> list:
    stats = run.learner_stats
    keys = [k for k in _MAIN_STATS if k in stats] + [k for k in stats if k not in _MAIN_STATS]
    return [(key, f"{stats[key]:.4g}") for key in keys]


class _ProgressLine:
    """Rendered on every refresh, so the elapsed time ticks while an iteration runs."""

    def __init__(self, run: Run):
        self.run = run

    def __rich__(self) -> Text:
        run = self.run
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{run.algorithm} {_env_name(run)}", style="bold cyan")
        for label, value in (("iter", _iterations(run)), ("env steps", _steps(run)),
                             ("return", _returns(run)), ("steps/s", _num(run.steps_per_s, 0)),
                             ("elapsed", _duration(run.elapsed_s))):
            text.append("  │  ", style="dim")
            text.append(f"{label} ", style="dim")
            text.append(value, style="bold")
        return text


class Display:
    def __init__(self, console: Optional[Console] = None):
        self.console = console or Console(file=sys.stdout, highlight=False)
        self.is_live = self.console.is_terminal and not self.console.is_dumb_terminal
        self._live = None

    @contextlib.contextmanager
    def building(self, run: Run):
        message = f"building {run.algorithm} on {_env_name(run)} ..."
        if self.is_live:
            with self.console.status(message):
                yield
        else:
            print(message, flush=True)
            yield

    def started(self, run: Run) -> None:
        line = f"training {run.algorithm} on {_env_name(run)} (built in " \
               f"{_duration(run.build_time_s)}; {_stop_criteria(run)})"
        lines = [line] + [f"  {note}" for note in run.notes]
        for text in lines:
            if self.is_live:
                self.console.print(text, style="dim")
            else:
                print(text, flush=True)

    @contextlib.contextmanager
    def live(self, run: Run):
        if not self.is_live:
            yield
            return
        with Live(_ProgressLine(run), console=self.console, refresh_per_second=4) as live:
            self._live = live
            try:
                yield
            finally:
                live.refresh()
                self._live = None

    def iteration(self, run: Run) -> None:
        if self._live is not None:
            self._live.refresh()
        elif not self.is_live:
            print(f"iter {_iterations(run)} | env steps {_steps(run)} | return {_returns(run)} | "
                  f"{_num(run.steps_per_s, 0)} env steps/s | {_duration(run.elapsed_s)}", flush=True)

    def summary(self, run: Run) -> None:
        rows, stats = summary_rows(run), learner_rows(run)
        if self.is_live:
            table = Table(title=f"relayrl train {run.algorithm}", show_header=False,
                          title_justify="left")
            table.add_column(style="dim")
            table.add_column(style="bold")
            for key, value in rows:
                table.add_row(key, value)
            if stats:
                table.add_section()
                table.add_row("learner (default_policy)", "")
                for key, value in stats:
                    table.add_row(f"  {key}", value)
            self.console.print(table)
            return
        width = max(len(key) for key, _ in rows + [("  " + k, v) for k, v in stats])
        lines = ["summary"] + [f"  {key.ljust(width)}  {value}" for key, value in rows]
        if stats:
            lines.append("  learner (default_policy)")
            lines += [f"    {key.ljust(width - 2)}  {value}" for key, value in stats]
        print("\n".join(lines), flush=True)
