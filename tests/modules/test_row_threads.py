"""relayrl/modules/row_threads.py: blocks of whole chunks on Python threads (CQL's critics on several cores), set by
the Learner's "auto" threads, with the values and gradients of the one-thread pass."""
import multiprocessing
import threading

import pytest
import torch
from torch import nn

from relayrl import PPOConfig
from relayrl.learner import torch_threads
from relayrl.learner.torch_threads import limit_torch_threads
from relayrl.modules import row_threads
from relayrl.modules.chunked_relu_mlp import run_layers_chunked
from relayrl.modules.mlp import run_layers
from relayrl.modules.row_threads import row_blocks, run_blocks, set_row_threads


@pytest.fixture
def threads_restored(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    torch_before, rows_before = torch.get_num_threads(), row_threads._threads
    yield
    torch.set_num_threads(torch_before)
    set_row_threads(rows_before)


@pytest.mark.parametrize("rows, chunk, threads", [(7680, 512, 2), (1300, 512, 2), (1300, 512, 8), (513, 512, 4),
                                                  (100, 512, 2), (5000, 512, 3)])
def test_blocks_cover_the_rows_in_whole_chunks(rows, chunk, threads):
    blocks = row_blocks(rows, chunk, threads)
    assert blocks[0][0] == 0 and blocks[-1][1] == rows
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))  # contiguous, in order
    assert all(start % chunk == 0 and start < stop for start, stop in blocks)
    assert len(blocks) == min(threads, -(-rows // chunk))
    sizes = [-(-(stop - start) // chunk) for start, stop in blocks]
    assert max(sizes) - min(sizes) <= 1  # even shares


def test_blocks_run_on_other_threads_without_autograd_and_errors_come_after_all_blocks():
    seen = []

    def work(start, stop):
        seen.append((threading.current_thread().name, torch.is_grad_enabled(), start))
        return stop - start

    assert run_blocks(work, [(0, 3), (3, 5), (5, 6)]) == [3, 2, 1]  # in block order
    assert {name for name, _, _ in seen} != {threading.current_thread().name}
    assert not any(grad for _, grad, _ in seen)

    finished = []

    def failing(start, stop):
        if start == 3:
            raise ValueError("block 3 failed")
        threading.Event().wait(0.2)
        finished.append(start)

    with pytest.raises(ValueError, match="block 3 failed"):
        run_blocks(failing, [(0, 3), (3, 5), (5, 6)])
    assert sorted(finished) == [0, 5]  # every other block finished before the error reached the caller


def _values_and_grads(run, x, nets):
    params = [p for net in nets for p in net.parameters()]
    for p in params:
        p.grad = None
    out = run(x, *nets)
    (out * torch.linspace(-1.0, 2.0, out.numel()).view_as(out)).sum().backward()
    return out.detach(), [p.grad.clone() for p in params]


@pytest.mark.parametrize("threads", [2, 3])
def test_chunks_on_threads_give_run_layers_values_and_gradients(threads_restored, threads):
    torch.set_num_threads(1)
    set_row_threads(threads)
    torch.manual_seed(0)
    nets = (nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU()), nn.Sequential(nn.Linear(32, 1)))
    x = torch.randn(2900, 5)  # 6 chunks, the last short
    want, want_grads = _values_and_grads(run_layers, x, nets)
    got, got_grads = _values_and_grads(run_layers_chunked, x, nets)
    torch.testing.assert_close(got, want)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    again, again_grads = _values_and_grads(run_layers_chunked, x, nets)
    assert torch.equal(again, got) and all(torch.equal(a, g) for a, g in zip(again_grads, got_grads))  # same sums


def test_torch_threads_of_its_own_keep_the_pass_on_one_thread(threads_restored):
    set_row_threads(2)
    torch.set_num_threads(2)
    assert row_threads.row_threads() == 1  # torch's threads share each op already: no oversubscription
    torch.set_num_threads(1)
    assert row_threads.row_threads() == 2


@pytest.mark.parametrize("cpus, cores, expected", [("auto", 2, 2), ("auto", 16, row_threads.MAX_ROW_THREADS),
                                                   ("auto", 1, 1), (1, 2, 1), (2, 2, 1)])
def test_the_learners_auto_threads_set_the_row_threads(threads_restored, monkeypatch, cpus, cores, expected):
    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    set_row_threads(5)
    limit_torch_threads(PPOConfig().learners(num_cpus_per_learner=cpus))
    assert row_threads._threads == expected


def _pool_in_a_forked_child(queue):
    queue.put(run_blocks(lambda start, stop: stop - start, [(0, 2), (2, 5)]))


def test_a_forked_child_makes_its_own_pool():
    run_blocks(lambda start, stop: 0, [(0, 1), (1, 2)])  # the parent's pool exists, with its thread
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_pool_in_a_forked_child, args=(queue,))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0, "the child hung or failed: it used the parent's pool, whose thread it lacks"
    assert queue.get(timeout=5) == [2, 3]
