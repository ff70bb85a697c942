"""Every script in examples/ runs end to end with a tiny budget (one training iteration), and takes the
flags docs/examples.md promises for every example (RLlib's example-script flags)."""
import pathlib
import subprocess
import sys

import pytest

# Examples that start a Ray cluster and Tune trial actors: ~40-60 s each on a 2-core machine.
SLOW_EXAMPLES = {"pbt_cartpole", "custom_training_workflow", "custom_policy_from_scratch"}
EXAMPLES = [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW_EXAMPLES else [])
            for p in sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))]


# Every example takes these (docs/examples.md); the values other than --stop-iters 1 are the budget no
# example reaches in one iteration, so the run stays one iteration long.
PROMISED_FLAGS = ["--stop-iters", "1", "--stop-reward", "1e9", "--stop-timesteps", "1000000000", "--seed", "0"]


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_runs(script):
    proc = subprocess.run([sys.executable, str(script), *PROMISED_FLAGS], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
