"""The Learner's torch threads (relayrl/learner/torch_threads.py): one by default (RLlib's rule: more threads stall
each other on a busy machine), the usable cores (at most 4) for an image module when OpenMP's waits are passive
(relayrl/omp_wait_policy.py), what the user says otherwise."""
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.learner import torch_threads
from relayrl.learner.torch_threads import limit_torch_threads


@pytest.fixture
def restore_threads(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_the_default_is_one_thread(restore_threads):
    torch.set_num_threads(2)
    limit_torch_threads(PPOConfig())
    assert torch.get_num_threads() == 1


def test_the_users_num_cpus_per_learner_wins(restore_threads):
    limit_torch_threads(PPOConfig().learners(num_cpus_per_learner=2))
    assert torch.get_num_threads() == 2


def test_omp_num_threads_leaves_torch_alone(restore_threads, monkeypatch):
    torch.set_num_threads(2)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    limit_torch_threads(PPOConfig())
    assert torch.get_num_threads() == 2


IMAGE = {"default_policy": (gym.spaces.Box(0, 255, (42, 42, 1), np.uint8), gym.spaces.Discrete(2))}
VECTOR = {"default_policy": (gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2))}


@pytest.fixture
def passive_waits_on(monkeypatch, cores: int = 2):
    import relayrl.omp_wait_policy

    monkeypatch.setattr(relayrl.omp_wait_policy, "PASSIVE_WAIT", True)
    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    return monkeypatch


@pytest.mark.parametrize("spaces, passive, cores, threads", [
    (IMAGE, True, 2, 2), (IMAGE, True, 8, 4), (IMAGE, True, 1, 1),  # an image module: the cores, at most 4
    (IMAGE, False, 2, 1),  # spinning waits stall under load: one thread
    (VECTOR, True, 2, 1), (None, True, 2, 1)])  # small networks, or no spaces known: one thread
def test_auto_gives_an_image_module_the_cores_when_waits_are_passive(restore_threads, monkeypatch, spaces, passive,
                                                                     cores, threads):
    import relayrl.omp_wait_policy

    monkeypatch.setattr(relayrl.omp_wait_policy, "PASSIVE_WAIT", passive)
    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    torch.set_num_threads(3)
    limit_torch_threads(PPOConfig(), spaces)
    assert torch.get_num_threads() == threads


def test_an_image_learner_takes_the_cores_and_the_users_setting_wins(restore_threads, passive_waits_on):
    from relayrl.testing.image_envs import DotSideEnv

    config = (PPOConfig().environment(DotSideEnv).env_runners(num_envs_per_env_runner=2)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1))
    algo = config.build_algo()
    try:
        assert torch.get_num_threads() == 2
        algo.train()
    finally:
        algo.stop()
    algo = config.learners(num_cpus_per_learner=1).build_algo()
    try:
        assert torch.get_num_threads() == 1
    finally:
        algo.stop()


def _wait_policy_after(code: str, **env) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | env
    return subprocess.run([sys.executable, "-c", code + "; import os; print(os.environ.get('OMP_WAIT_POLICY'))"],
                          env=environment, capture_output=True, text=True, check=True).stdout.split()[-1]


def test_import_relayrl_makes_waits_passive_only_before_torch_and_keeps_the_users_policy():
    assert _wait_policy_after("import relayrl") == "PASSIVE"
    assert _wait_policy_after("import torch, relayrl") == "None"  # too late for torch's OpenMP runtime: left alone
    assert _wait_policy_after("import relayrl", OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"
    assert _wait_policy_after("import relayrl; from relayrl.omp_wait_policy import PASSIVE_WAIT; "
                              "assert not PASSIVE_WAIT", OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"


@pytest.mark.parametrize("torch_first, passive", [(True, False), (False, True)])
def test_auto_says_once_when_torch_imported_first_costs_an_image_module_its_threads(restore_threads, monkeypatch,
                                                                                     caplog, torch_first, passive):
    import relayrl.omp_wait_policy

    monkeypatch.setattr(relayrl.omp_wait_policy, "PASSIVE_WAIT", passive)
    monkeypatch.setattr(relayrl.omp_wait_policy, "TORCH_LOADED_FIRST", torch_first)
    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: set(range(2)), raising=False)
    monkeypatch.setattr(torch_threads, "_said", set())
    with caplog.at_level("WARNING", logger="relayrl"):
        for _ in range(2):
            limit_torch_threads(PPOConfig(), IMAGE)
        threads = torch.get_num_threads()
        limit_torch_threads(PPOConfig(), VECTOR)  # one thread is what a vector task gets anyway: nothing to say
    said = [r.getMessage() for r in caplog.records if "torch was imported before relayrl" in r.getMessage()]
    assert threads == (1 if torch_first else 2)
    assert len(said) == (1 if torch_first else 0)
    if torch_first:
        assert "not 2" in said[0] and "Import relayrl before torch" in said[0] and "num_cpus_per_learner" in said[0]


def test_torch_loaded_first_is_known_only_when_no_wait_policy_was_set():
    check = "from relayrl.omp_wait_policy import TORCH_LOADED_FIRST as T; print(T)"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    for code, extra, expected in [(f"import torch; {check}", {}, "True"), (check, {}, "False"),
                                  (f"import torch; {check}", {"OMP_WAIT_POLICY": "ACTIVE"}, "False")]:
        out = subprocess.run([sys.executable, "-c", code], env=env | extra, capture_output=True, text=True,
                             check=True).stdout.split()
        assert out[-1] == expected, (code, extra, out)


@pytest.mark.parametrize("cpus, threads", [(0.5, 1), (1.0, 1), (2.5, 2), (2, 2)])
def test_a_fraction_of_cpus_trains_with_the_whole_cpus_it_holds_and_at_least_one_thread(restore_threads, cpus,
                                                                                         threads):
    torch.set_num_threads(3)
    limit_torch_threads(PPOConfig().learners(num_cpus_per_learner=cpus))
    assert torch.get_num_threads() == threads


@pytest.mark.parametrize("bad", [0, 0.0, -1, -0.5, float("nan"), "two", True, None])
def test_no_cpus_negative_cpus_and_other_values_than_auto_are_refused_saying_what_is_allowed(bad):
    with pytest.raises(ValueError, match=r"num_cpus_per_learner must be a positive number of CPUs \(fractions "
                                         r"allowed, e.g. 0.5\) or 'auto'"):
        PPOConfig().learners(num_cpus_per_learner=bad)
    assert PPOConfig().learners(num_cpus_per_learner=0.5).num_cpus_per_learner == 0.5
