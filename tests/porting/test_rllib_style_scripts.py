"""Porting by changing imports: scripts written for RLlib (imports from `ray.rllib`, `.framework("torch")`,
`add_rllib_example_script_args`) run on relayrl after replacing `ray.rllib` by `relayrl` and nothing else, each with
a tiny budget, in its own process, where importing `ray.rllib` (installed with ray) fails. Each script checks its
feature and prints `PORTED OK`.

tests/porting/rllib_style/ keeps them as that one substitution leaves them (relayrl never holds code that imports
`ray.rllib`); the RLlib script is the stored text with `relayrl` replaced back by `ray.rllib`, exactly, since the
RLlib scripts never name relayrl."""
import importlib
import os
import re
import subprocess
import sys

import pytest

import relayrl
from relayrl.testing.no_ray_rllib import MESSAGE, env_without_ray_rllib
from tests.stack_on_hang import run_reporting_hangs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))
SCRIPTS_DIR = os.path.join(os.path.dirname(__file__), "rllib_style")
# Kept as text (`.py.txt`): scripts that the test runs in a child process, never modules of the test suite.
SCRIPTS = sorted(name for name in os.listdir(SCRIPTS_DIR) if name.endswith(".py.txt"))
THROUGH_TUNE = {"tune_algo_by_name.py.txt", "pbt.py.txt"}  # these start (and stop) a local Ray with 2 CPUs


def port(text: str) -> str:
    """The whole port: one substitution."""
    return text.replace("ray.rllib", "relayrl")


def rllib_original(stored: str) -> str:
    """The RLlib script a stored (ported) one came from."""
    return stored.replace("relayrl", "ray.rllib")


def test_there_are_ten_scripts_in_rllibs_style():
    assert len(SCRIPTS) >= 10, SCRIPTS
    for name in SCRIPTS:
        stored = _stored(name)
        assert "ray.rllib" not in stored, f"{name}: store it as the port leaves it"
        text = rllib_original(stored)
        assert port(text) == stored
        assert re.search(r"^from ray\.rllib\.", text, re.M) and ".framework(\"torch\")" in text, name
        assert "add_rllib_example_script_args" in text, name


def _stored(name: str) -> str:
    with open(os.path.join(SCRIPTS_DIR, name)) as f:
        return f.read()


def _env_without_ray_rllib(tmp_path) -> dict:
    # Every process of a ported run (the script and Ray's workers) refuses ray.rllib.
    return {**env_without_ray_rllib(tmp_path / "no_ray_rllib", ROOT), "RELAYRL_RESULTS_DIR": str(tmp_path)}


def test_the_guard_stops_ray_rllib_imports(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import ray.rllib.algorithms.ppo"], capture_output=True, text=True,
                          timeout=120, env=_env_without_ray_rllib(tmp_path), cwd=tmp_path)
    assert proc.returncode != 0 and MESSAGE in proc.stderr, proc.stderr[-2000:]


def test_the_guard_stops_ray_rllib_imports_in_the_test_process():
    """tests/porting/conftest.py guards every porting test's own process too (the seeds' snippets run there)."""
    with pytest.raises(ImportError, match=MESSAGE):
        importlib.import_module("ray.rllib.algorithms.ppo")


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_runs_after_replacing_ray_rllib(name, tmp_path):
    ported = _stored(name)  # port(its RLlib original), as test_there_are_ten_scripts_in_rllibs_style checks
    script = tmp_path / name.removesuffix(".txt")
    script.write_text(ported)
    argv = ["--num-cpus", "2", "--verbose", "0"] if name in THROUGH_TUNE else ["--no-tune", "--stop-iters", "2"]
    proc = run_reporting_hangs([sys.executable, str(script), *argv], timeout=400, env=_env_without_ray_rllib(tmp_path),
                               cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-4000:]
    assert "PORTED OK" in proc.stdout, proc.stdout[-3000:]
