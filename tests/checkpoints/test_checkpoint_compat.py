"""Checkpoints written by relayrl at b9b18e1 (tests/data/checkpoints_b9b18e1, made by its made_with.py) still load
and resume bit-identically: one more train() gives the weights that run gave right after saving.

torch's float rounding depends on the CPU (MKL and ATen pick kernels by vendor and instruction set), so on
another kind of CPU the reference is what b9b18e1's own code gives there when it resumes the same checkpoint
(`same_by_b9b18e1_on_other_cpus` in expected.json)."""
import hashlib
import json
import pathlib

import pytest

from relayrl import Algorithm
from relayrl.testing.cpu_kind import this_cpu

DATA = pathlib.Path(__file__).parent.parent / "data" / "checkpoints_b9b18e1"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def _weights_digest(algo) -> str:
    digest = hashlib.sha256()
    for name, value in sorted(algo.learner_group.get_module("default_policy").state_dict().items()):
        digest.update(name.encode())
        digest.update(value.detach().numpy().tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_checkpoint_from_b9b18e1_loads_and_resumes_bit_identically(name):
    algo = Algorithm.from_checkpoint(DATA / name)
    try:
        result = algo.train()
        expected = EXPECTED[name]
        assert result["training_iteration"] == expected["training_iteration"]
        assert result["num_env_steps_sampled_lifetime"] == expected["num_env_steps_sampled_lifetime"]
        known = {"the machine that made them": expected["weights_sha256_after_one_more_train"],
                 **expected.get("same_by_b9b18e1_on_other_cpus", {})}
        assert _weights_digest(algo) in known.values(), (
            f"the weights after one more train() match none of b9b18e1's {sorted(known)}. On a new kind of CPU "
            f"({this_cpu()}) resume the checkpoint with b9b18e1's code (a git worktree of b9b18e1 on PYTHONPATH) "
            f"and record its digest under same_by_b9b18e1_on_other_cpus in {DATA / 'expected.json'}")
    finally:
        algo.stop()
