"""The Learner's torch threads (relayrl/learner/torch_threads.py): the cores the process may use when it trains in
the algorithm's own process, never more than they are, one in a remote Learner actor, what the user says otherwise."""
import os

import pytest
import torch

from relayrl import PPOConfig
from relayrl.learner import torch_threads
from relayrl.learner.torch_threads import learner_threads, limit_torch_threads


@pytest.fixture
def no_omp_variable(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)


@pytest.fixture
def four_usable_cores(monkeypatch, no_omp_variable):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)


def test_an_embedded_learner_takes_the_cores_the_process_may_use(four_usable_cores):
    assert learner_threads(PPOConfig()) == 4


def test_remote_runners_keep_the_cpus_reserved_for_them(four_usable_cores):
    assert learner_threads(PPOConfig().env_runners(num_env_runners=2)) == 2
    assert learner_threads(PPOConfig().env_runners(num_env_runners=2, num_cpus_per_env_runner=0.5)) == 3
    assert learner_threads(PPOConfig().env_runners(num_env_runners=8)) == 1  # never fewer than one


def test_remote_learner_actors_train_on_the_one_cpu_ray_reserved(four_usable_cores):
    assert learner_threads(PPOConfig().learners(num_learners=2)) == 1


def test_the_users_num_cpus_per_learner_and_omp_num_threads_win(four_usable_cores, monkeypatch):
    assert learner_threads(PPOConfig().learners(num_cpus_per_learner=3)) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert learner_threads(PPOConfig()) is None  # torch follows the variable itself


def test_inside_a_ray_worker_the_cpus_ray_assigned_count(four_usable_cores, monkeypatch):
    monkeypatch.setattr(torch_threads, "_ray_assigned_cpus", lambda: 2.0)
    assert learner_threads(PPOConfig()) == 2


def test_building_an_algorithm_sets_them(no_omp_variable, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    before = torch.get_num_threads()
    try:
        limit_torch_threads(PPOConfig())
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
