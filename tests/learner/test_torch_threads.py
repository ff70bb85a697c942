"""The Learner's torch threads (relayrl/learner/torch_threads.py): one by default (RLlib's rule: more threads stall
each other on a busy machine), what the user says otherwise."""
import pytest
import torch

from relayrl import PPOConfig
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
