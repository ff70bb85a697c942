"""Porting by changing imports: scripts written for RLlib (tests/porting/rllib_style/: imports from `ray.rllib`,
`.framework("torch")`, `add_rllib_example_script_args`) run on relayrl after replacing `ray.rllib` by `relayrl` and
nothing else, each with a tiny budget, in its own process, where importing `ray.rllib` (installed with ray) fails.
Each script checks its feature and prints `PORTED OK`."""
import importlib
import os
import re
import subprocess
import sys

import pytest

import relayrl
from relayrl.testing.no_ray_rllib import MESSAGE, env_without_ray_rllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))
SCRIPTS_DIR = os.path.join(os.path.dirname(__file__), "rllib_style")
# Kept as text (`.py.txt`): they are RLlib code as an RLlib user writes it, never imported or run as written;
# relayrl's own Python files never name `ray.rllib`.
SCRIPTS = sorted(name for name in os.listdir(SCRIPTS_DIR) if name.endswith(".py.txt"))
THROUGH_TUNE = {"tune_algo_by_name.py.txt", "pbt.py.txt"}  # these start (and stop) a local Ray with 2 CPUs


def port(text: str) -> str:
    """The whole port: one substitution."""
    return text.replace("ray.rllib", "relayrl")


def test_there_are_ten_scripts_in_rllibs_style():
    assert len(SCRIPTS) >= 10, SCRIPTS
    for name in SCRIPTS:
        with open(os.path.join(SCRIPTS_DIR, name)) as f:
            text = f.read()
        assert "relayrl" not in text, f"{name} must be written for RLlib"
        assert re.search(r"^from ray\.rllib\.", text, re.M) and ".framework(\"torch\")" in text, name
        assert "add_rllib_example_script_args" in text, name


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
    with open(os.path.join(SCRIPTS_DIR, name)) as f:
        ported = port(f.read())
    script = tmp_path / name.removesuffix(".txt")
    script.write_text(ported)
    argv = ["--num-cpus", "2", "--verbose", "0"] if name in THROUGH_TUNE else ["--no-tune", "--stop-iters", "2"]
    proc = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=400,
                          env=_env_without_ray_rllib(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-4000:]
    assert "PORTED OK" in proc.stdout, proc.stdout[-3000:]
