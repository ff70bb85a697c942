"""CQL's Learner with "auto" threads on 2 cores runs its critics' pass over the sampled actions as two blocks on
Python threads (relayrl/modules/row_threads.py), and trains as it does on one."""
import pytest
import torch

from relayrl import CQLConfig
from relayrl.learner import torch_threads
from relayrl.modules import row_threads


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    torch_before, rows_before = torch.get_num_threads(), row_threads._threads
    yield
    torch.set_num_threads(torch_before)
    row_threads.set_row_threads(rows_before)


def _train(pendulum_rows, monkeypatch, cpus):
    blocks = []
    real = row_threads.run_blocks
    monkeypatch.setattr("relayrl.modules.chunked_relu_mlp.run_blocks",
                        lambda work, parts: blocks.append(len(parts)) or real(work, parts))
    config = (CQLConfig().environment("Pendulum-v1").rl_module(model_config={"fcnet_hiddens": [32, 32]})
              .training(train_batch_size_per_learner=64, bc_iters=0)
              .offline_data(input_=pendulum_rows, dataset_num_iters_per_learner=3)
              .learners(num_cpus_per_learner=cpus).reporting(min_train_timesteps_per_iteration=0)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        algo.train()
        weights = {k: torch.as_tensor(v).clone() for k, v in algo.get_module().state_dict().items()}
    finally:
        algo.stop()
    return blocks, weights


def test_two_cores_split_the_pass_and_train_as_one_thread_does(two_cores, pendulum_rows, monkeypatch):
    blocks, weights = _train(pendulum_rows, monkeypatch, "auto")
    assert blocks and set(blocks) == {2}  # 64 x 30 rows: 4 chunks, 2 per thread
    one_blocks, one_weights = _train(pendulum_rows, monkeypatch, 1)
    assert set(one_blocks) == {1}
    assert weights.keys() == one_weights.keys()
    for key in weights:  # the same updates, up to the order of float sums
        torch.testing.assert_close(weights[key], one_weights[key], rtol=1e-4, atol=1e-5)
