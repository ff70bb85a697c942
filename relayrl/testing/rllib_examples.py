"""Run RLlib's own example scripts (the files its wheel ships under `ray/rllib/examples/`), ported by replacing
`ray.rllib` with `relayrl` and nothing else, or as they are (RLlib itself, in a venv where RLlib runs).

The scripts are RLlib's code: they are read from the installed `ray` package at run time, never stored here.
Locating them imports nothing from `ray` (`importlib.util.find_spec` reads the package's location only).

    python -m relayrl.testing.rllib_examples [--rllib] [--jobs 2] [script ...]

runs them with the flags below and prints one line per script (`runs` / `fails: <last error line>`); with
`--rllib` it runs them unchanged under this interpreter (use the peers' venv, where RLlib itself runs).
"""
import argparse
import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Mapping, Optional

from relayrl.testing.no_ray_rllib import env_without_ray_rllib
from relayrl.testing.rllib_example_data import provide as provide_data

RAY_VERSION = "2.60.0"  # the ray wheel whose examples the expected table describes (pinned in the test extra)
# What every script gets (the flags RLlib's own count was measured with); `--no-tune` where the script takes it.
FLAGS = ("--num-env-runners=0", "--stop-iters=2")
NO_TUNE = "--no-tune"
# Flags a script needs to run here (it refuses to run or waits without them); RLlib's count is measured with them too.
SCRIPT_ARGS = {
    "multi_agent/two_step_game_with_grouped_agents.py": ("--num-agents=2",),
    # Its own simulator process (else it waits for one to connect, e.g. a game engine's).
    "envs/env_connecting_to_rllib_w_tcp_client.py": ("--use-dummy-client",),
    # Evaluation in the trial's process: the script's own PPO (built outside Tune, never stopped) holds one of the
    # 2 CPUs with its evaluation EnvRunner, so a last Tune trial asking for 2 (itself + one) waits for ever.
    "offline_rl/train_w_bc_finetune_w_ppo.py": ("--evaluation-interval=3", "--evaluation-num-env-runners=0",
                                                "--evaluation-duration=5"),
}
# Scripts that run as their docstrings say only under Tune (they read Tune's ResultGrid: `get_best_result(...)`,
# and stop at the returns they assert next): no `--no-tune`, and their own stop criteria instead of `--stop-iters`.
UNDER_TUNE = {"offline_rl/cartpole_recording.py", "offline_rl/train_w_bc_finetune_w_ppo.py"}
TIMED_OUT = 124
# Folders that are not scripts or not in the comparison: the old API stack, Ray Serve deployments, helper classes.
_SKIPPED_PARTS = {"_old_api_stack", "ray_serve", "classes", "utils", "__pycache__"}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def examples_dir() -> str:
    """`ray/rllib/examples` of the installed ray wheel (located without importing ray)."""
    spec = importlib.util.find_spec("ray")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("ray is not installed: `pip install -c constraints.txt -e '.[test]'` installs it")
    return os.path.join(list(spec.submodule_search_locations)[0], "rllib", "examples")


def ray_version() -> str:
    return importlib.metadata.version("ray")


def example_scripts(folder: Optional[str] = None) -> List[str]:
    """The example scripts, as paths relative to `ray/rllib/examples` (e.g. `connectors/frame_stacking.py`)."""
    folder = folder or examples_dir()
    scripts = []
    for parent, dirs, files in os.walk(folder):
        rel_parent = os.path.relpath(parent, folder)
        if set(rel_parent.split(os.sep)) & _SKIPPED_PARTS:
            continue
        scripts += [os.path.normpath(os.path.join(rel_parent, name)) for name in files
                    if name.endswith(".py") and name != "__init__.py" and rel_parent != "."]
    return sorted(scripts)


def port(source: str) -> str:
    """The whole port: one substitution."""
    return source.replace("ray.rllib", "relayrl")


def read_script(script: str) -> str:
    with open(os.path.join(examples_dir(), script)) as f:
        return f.read()


def script_argv(script: str, source: str) -> List[str]:
    """The flags for one script: RLlib's example flags where it parses them (else none: it takes no flags), and
    those it demands (SCRIPT_ARGS); under Tune (UNDER_TUNE) only `--num-env-runners=0`."""
    if "add_rllib_example_script_args" not in source:
        return []
    if script in UNDER_TUNE:
        return [FLAGS[0], *SCRIPT_ARGS.get(script, ())]
    return [*FLAGS, NO_TUNE, *SCRIPT_ARGS.get(script, ())]


@dataclass
class Outcome:
    script: str
    returncode: int
    output: str
    seconds: float

    @property
    def runs(self) -> bool:
        return self.returncode == 0

    def error_line(self) -> str:
        """The last line that names an error (or the timeout), for the summary."""
        if self.returncode == TIMED_OUT:
            return f"timed out after {self.seconds:.0f} s"
        lines = [line.strip() for line in self.output.splitlines() if line.strip()]
        errors = [line for line in lines if re.match(r"^[\w.]*(Error|Exception|Exit)\b", line)]
        return (errors or lines or ["(no output)"])[-1][:300]


def run_script(script: str, *, ported: bool = True, timeout: float = 300, python: str = sys.executable,
               pythonpath: str = ROOT, rllib_pythonpath: Optional[str] = None,
               data_cache: Optional[str] = None) -> Outcome:
    """Run one example script in a child process (ported: on relayrl, with `ray.rllib` unimportable; else as
    RLlib ships it, with `rllib_pythonpath` as its PYTHONPATH, if any), in a temporary folder of its own, with the
    data it reads (relayrl/testing/rllib_example_data.py; made in `data_cache`, else once per process). One thread
    for torch and a Ray instance of its own (RAY_ADDRESS=local)."""
    source = read_script(script)
    with tempfile.TemporaryDirectory(prefix="rllib_example_") as workdir:
        # Laid out as in the wheel (`rllib/examples/<script>`), with the data it reads from RLlib's source tree.
        path = os.path.join(workdir, "rllib", "examples", script)
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(port(source) if ported else source)
        provide_data(script, os.path.join(workdir, "rllib"), data_cache)
        if ported:
            env = env_without_ray_rllib(os.path.join(workdir, "no_ray_rllib"), pythonpath)
        else:
            env = {**os.environ, "RAY_ADDRESS": "local"}
            env.pop("PYTHONPATH", None)
            if rllib_pythonpath:
                env["PYTHONPATH"] = rllib_pythonpath
        # Results, Tune trials and logs (~/ray_results, ~/relayrl_results) go to the temporary folder.
        env.update(OMP_NUM_THREADS="1", MPLBACKEND="Agg", HOME=workdir, RELAYRL_RESULTS_DIR=workdir)
        start = time.monotonic()
        # Its own process group, so that a timeout ends the script and whatever it started (Ray's processes).
        proc = subprocess.Popen([python, path, *script_argv(script, source)], cwd=workdir, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
            returncode = proc.returncode
        except subprocess.TimeoutExpired:
            _end_group(proc.pid)
            output, _ = proc.communicate()
            returncode = TIMED_OUT
        _end_group(proc.pid)  # what the script left running (a Ray instance it did not shut down)
        return Outcome(script, returncode, output, time.monotonic() - start)


def _end_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_scripts(scripts: Iterable[str], jobs: int = 1, timeout: float = 300,
                timeouts: Optional[Mapping[str, float]] = None, **kwargs) -> Iterator[Outcome]:
    """Outcomes in the order of `scripts`, each as soon as it and those before it are done; `jobs` at a time.
    `timeouts`: per-script limits instead of `timeout`."""
    timeouts = timeouts or {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(lambda script: run_script(script, timeout=timeouts.get(script, timeout), **kwargs),
                            scripts)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scripts", nargs="*", help="scripts relative to ray/rllib/examples (default: all)")
    parser.add_argument("--rllib", action="store_true", help="run them unchanged (RLlib itself)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--log-dir", default=None, help="write each script's output here")
    parser.add_argument("--rllib-pythonpath", default=None,
                        help="with --rllib: a PYTHONPATH for the scripts (e.g. packages missing from RLlib's venv)")
    parser.add_argument("--data-cache", default=None,
                        help="keep the data the offline scripts read here (made once; default: a temporary folder)")
    args = parser.parse_args(argv)
    print(f"ray {ray_version()}: {examples_dir()}", flush=True)
    scripts = args.scripts or example_scripts()
    runs = 0
    for outcome in run_scripts(scripts, jobs=args.jobs, ported=not args.rllib, timeout=args.timeout,
                               rllib_pythonpath=args.rllib_pythonpath, data_cache=args.data_cache):
        runs += outcome.runs
        status = "runs" if outcome.runs else f"fails: {outcome.error_line()}"
        print(f"{outcome.script}\t{outcome.seconds:.0f}s\t{status}", flush=True)
        if args.log_dir:
            os.makedirs(args.log_dir, exist_ok=True)
            with open(os.path.join(args.log_dir, outcome.script.replace(os.sep, "__") + ".log"), "w") as f:
                f.write(outcome.output)
    print(f"{runs} of {len(scripts)} run", flush=True)


if __name__ == "__main__":
    main()
