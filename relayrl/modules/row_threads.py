"""Python threads that share one big CPU pass by rows, where torch runs each op on one intra-op thread.

CQL's conservative pass (relayrl/modules/chunked_relu_mlp.py) runs both critics over 7,680 rows a batch in 512-row
chunks. A second intra-op thread per product stalls there: each chunk's products are small, and with passive
OpenMP waits the threads sleep and wake at every op (15.2 -> 10.5 CQL updates/s with 2 torch threads, 2 cores,
2026-12-05). Blocks of whole chunks on Python threads meet once per pass instead; torch lets go of the GIL inside
each op. A thread that waits for the others sleeps, so a busy machine loses nothing to spinning.

The Learner sets the count (relayrl/learner/torch_threads.py: with "auto" threads and one torch thread, the cores
this process may use, at most MAX_ROW_THREADS). Until a Learner sets it, it is 1: the pass runs on the calling
thread.
"""
import os
from concurrent.futures import ThreadPoolExecutor, wait

import torch

MAX_ROW_THREADS = 4  # measured on 2 cores only (docs/offline.md#speed-and-learning-measured)

_threads = 1
_pool = None
_pool_key = None  # (pid, workers): a forked child has the pool's object but not its threads, so it makes its own


def set_row_threads(threads: int) -> None:
    global _threads
    _threads = max(1, int(threads))


def row_threads() -> int:
    """Threads for a pass by rows: the Learner's count while torch runs one intra-op thread, else 1 (torch's own
    threads already share each op; both would oversubscribe the cores)."""
    return _threads if torch.get_num_threads() == 1 else 1


def row_blocks(rows: int, chunk: int, threads: int):
    """[(start, stop)] of `rows`, whole chunks per block (the last may be short), at most `threads` blocks."""
    chunks = -(-rows // chunk)
    blocks = min(threads, chunks)
    bounds = [min(rows, (chunks * b // blocks) * chunk) for b in range(blocks + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def run_blocks(work, blocks):
    """[work(start, stop) for each block]: the first block on this thread, the others on the pool, no autograd
    recording on any (the pool's threads start with grad mode on). Waits for every block before it returns or
    raises, so no block still writes into shared outputs afterwards."""
    def no_grad_work(start, stop):
        with torch.no_grad():
            return work(start, stop)

    if len(blocks) == 1:
        return [no_grad_work(*blocks[0])]
    futures = [_pool_with(len(blocks) - 1).submit(no_grad_work, *block) for block in blocks[1:]]
    try:
        first = no_grad_work(*blocks[0])
    finally:
        wait(futures)
    return [first, *(future.result() for future in futures)]  # (result() raises a block's error)


def _pool_with(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_key
    if _pool_key != (os.getpid(), workers):
        if _pool is not None and _pool_key[0] == os.getpid():
            _pool.shutdown(wait=False)
        _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="relayrl-rows")
        _pool_key = (os.getpid(), workers)
    return _pool


__all__ = ["MAX_ROW_THREADS", "set_row_threads", "row_threads", "row_blocks", "run_blocks"]
