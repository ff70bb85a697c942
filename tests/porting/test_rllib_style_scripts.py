"""Porting by changing imports: scripts written for RLlib (tests/porting/rllib_style/: imports from `ray.rllib`,
`.framework("torch")`, `add_rllib_example_script_args`) run on relayrl after replacing `ray.rllib` by `relayrl` and
nothing else, each with a tiny budget, in its own process, where importing `ray.rllib` (installed with ray) fails.
Each script checks its feature and prints `PORTED OK`."""
import os
import re
import subprocess
import sys

import pytest

import relayrl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))
SCRIPTS_DIR = os.path.join(os.path.dirname(__file__), "rllib_style")
# Kept as text (`.py.txt`): they are RLlib code as an RLlib user writes it, never imported or run as written;
# relayrl's own Python files never name `ray.rllib`.
SCRIPTS = sorted(name for name in os.listdir(SCRIPTS_DIR) if name.endswith(".py.txt"))
THROUGH_TUNE = {"tune_algo_by_name.py.txt", "pbt.py.txt"}  # these start (and stop) a local Ray with 2 CPUs


# Every process of a ported run (the script and Ray's workers) starts with this: ray.rllib is installed with ray,
# and importing it must fail, so a pass shows the script ran on relayrl alone.
NO_RAY_RLLIB = """import sys


class _NoRayRLlib:
    def find_spec(self, name, path=None, target=None):
        if name == "ray.rllib" or name.startswith("ray.rllib."):
            raise ImportError(f"{name}: ported scripts must run without ray.rllib")
        return None


sys.meta_path.insert(0, _NoRayRLlib())
"""


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
    guard = tmp_path / "no_ray_rllib"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_RAY_RLLIB)
    # RAY_ADDRESS=local: a script's plain ray.init() starts its own instance, never joins one already running.
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(guard), ROOT]), "RAY_ADDRESS": "local",
            "RELAYRL_RESULTS_DIR": str(tmp_path)}


def test_the_guard_stops_ray_rllib_imports(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import ray.rllib.algorithms.ppo"], capture_output=True, text=True,
                          timeout=120, env=_env_without_ray_rllib(tmp_path), cwd=tmp_path)
    assert proc.returncode != 0 and "ported scripts must run without ray.rllib" in proc.stderr, proc.stderr[-2000:]


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
