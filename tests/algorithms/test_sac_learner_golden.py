"""SAC's Learner gives bit-identical numbers to the version these fingerprints were taken from (3ada581,
before the loss was rewritten as one function): reported stats of each update, the TD errors handed to the
replay buffer, and the weights, alpha and optimiser moments afterwards, for a fixed seed and batch.

The fingerprints are in tests/data/sac_learner_3ada581.json, written by
`python tests/algorithms/test_sac_learner_golden.py > tests/data/sac_learner_3ada581.json` at 3ada581. They are
exact (float.hex, sha256), as tests/checkpoints/test_checkpoint_compat.py's are: a torch build or CPU whose kernels
round differently gives other bits; rewrite the file only for an intended change of numbers, and say so. On
another kind of CPU the reference is what 3ada581's own code gives there (this file run with a git worktree of
3ada581 on PYTHONPATH), kept by CPU kind in tests/data/sac_learner_3ada581_other_cpus.json.
"""
import hashlib
import json
import pathlib

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.sac import SACConfig
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.learner.learner import NUM_ENV_STEPS_SAMPLED_LIFETIME
from relayrl.testing.cpu_kind import this_cpu

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
SPACES = {"box": gym.spaces.Box(-2.0, 2.0, (2,), np.float32), "discrete": gym.spaces.Discrete(3)}
CASES = {  # name -> (action space, training options, batch has per-row n_step and importance weights)
    "box": ("box", {}, True),
    "discrete": ("discrete", {}, True),
    "box_one_q_mse_clip": ("box", {"twin_q": False, "td_error_loss_fn": "mse", "grad_clip": 0.5, "n_step": 2},
                           False),
    "discrete_one_q": ("discrete", {"twin_q": False, "initial_alpha": 0.3}, False),
}
NUM_UPDATES = 3


def _batch(action_space, per_row_columns: bool, n: int = 32, seed: int = 0):
    rng = np.random.default_rng(seed)
    actions = (rng.uniform(-1, 1, (n, 2)).astype(np.float32) if isinstance(action_space, gym.spaces.Box)
               else rng.integers(0, action_space.n, n))
    batch = {
        Columns.OBS: rng.normal(size=(n, 3)).astype(np.float32),
        Columns.NEXT_OBS: rng.normal(size=(n, 3)).astype(np.float32),
        Columns.ACTIONS: actions,
        Columns.REWARDS: rng.normal(size=n).astype(np.float32),
        Columns.TERMINATEDS: rng.random(n) < 0.25,
        "indices": np.arange(n),
    }
    if per_row_columns:
        batch["n_step"] = rng.integers(1, 4, n)
        batch["weights"] = rng.uniform(0.5, 1.5, n).astype(np.float32)
    return batch


def _digest(arrays) -> str:
    digest = hashlib.sha256()
    for name, value in arrays:
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (float, np.floating)) or (isinstance(value, torch.Tensor) and value.numel() == 1):
        return float(value).hex()
    return repr(value)


def fingerprint(case: str) -> dict:
    space_name, training, per_row_columns = CASES[case]
    action_space = SPACES[space_name]
    training = {"actor_lr": 1e-3, "critic_lr": 2e-3, "alpha_lr": 3e-3, "tau": 0.1, "n_step": 1, **training}
    config = (SACConfig().environment(observation_space=OBS, action_space=action_space)
              .training(**training).rl_module(model_config={"fcnet_hiddens": [16, 16]}).debugging(seed=0))
    torch.manual_seed(0)  # build_learner leaves the seed to the caller (Algorithm seeds before building)
    learner = config.build_learner(spaces={"__env_single__": (OBS, action_space)})
    batch = _batch(action_space, per_row_columns)
    torch.manual_seed(1)
    updates = []
    for i in range(NUM_UPDATES):
        results = learner.update(batch=batch, timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 100 * (i + 1)})
        indices, td_errors = learner.get_td_errors()[DEFAULT_MODULE_ID]
        updates.append({"results": _plain(results[DEFAULT_MODULE_ID]),
                        "td_errors": _digest([("indices", indices if indices is not None else np.array([])),
                                              ("td", td_errors)])})
    module_state = learner.module[DEFAULT_MODULE_ID].state_dict()
    optimizer_state = []
    for name, optimizer in learner.get_optimizers_for_module(DEFAULT_MODULE_ID):
        for i, state in enumerate(optimizer.state_dict()["state"].values()):
            optimizer_state += [(f"{name}.{i}.{k}", v.detach().numpy()) for k, v in sorted(state.items())]
    return {
        "updates": updates,
        "log_alpha": float(learner.curr_log_alpha[DEFAULT_MODULE_ID].detach()).hex(),
        "weights": _digest((k, v.detach().numpy()) for k, v in sorted(module_state.items())),
        "optimizers": _digest(optimizer_state),
    }


DATA = pathlib.Path(__file__).parent.parent / "data"
EXPECTED = json.loads((DATA / "sac_learner_3ada581.json").read_text())
EXPECTED_ON_OTHER_CPUS = json.loads((DATA / "sac_learner_3ada581_other_cpus.json").read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_sac_learner_numbers_are_bit_identical(case):
    # Any recorded CPU kind's numbers: two machines that report the same kind may still round differently.
    known = [EXPECTED[case]] + [by_case[case] for by_case in EXPECTED_ON_OTHER_CPUS.values()]
    assert fingerprint(case) in known, (
        f"none of 3ada581's recorded numbers (this CPU: {this_cpu()}). If 3ada581's own code gives these numbers "
        f"here too (run this file with a git worktree of 3ada581 on PYTHONPATH), record its output under a key "
        f"naming the CPU kind and the date in {DATA / 'sac_learner_3ada581_other_cpus.json'}")


if __name__ == "__main__":
    print(json.dumps({case: fingerprint(case) for case in sorted(CASES)}, indent=1))
