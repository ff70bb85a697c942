"""torch.distributed for data-parallel Learners: the process group and the DDP wrapper.

The Learner's forward pass *and* its loss run inside DistributedDataParallel's forward, so every
parameter a loss touches (e.g. PPO's value head, reached through `compute_values`, not
`forward_train`) is in the graph DDP sees, and backward() all-reduces (averages) all gradients.
Gradient clipping and the optimizer step then see identical gradients on every Learner.
"""
import datetime
import socket
from typing import Tuple

import torch
from torch import nn

# Generous: a collective waits this long for a slow peer before failing (instead of hanging forever).
COLLECTIVE_TIMEOUT = datetime.timedelta(minutes=10)


def free_port_address() -> Tuple[str, int]:
    """(this host's address as other Ray nodes see it, a free TCP port) for the rendezvous."""
    import ray

    address = ray.util.get_node_ip_address()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return address, sock.getsockname()[1]


def init_process_group(*, address: str, port: int, rank: int, world_size: int, backend: str) -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group(backend=backend, init_method=f"tcp://{address}:{port}", rank=rank,
                            world_size=world_size, timeout=COLLECTIVE_TIMEOUT)


def destroy_process_group() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


class _ForwardAndLosses(nn.Module):
    """What DDP runs each minibatch: the module's forward_train, then the Learner's losses."""

    def __init__(self, learner):
        super().__init__()
        self.module = learner.module  # registered: DDP all-reduces (and first broadcasts) its parameters
        self._train_pass = learner._train_pass  # forward_train + losses (compiled with torch_compile_learner)

    def forward(self, batch):
        return self._train_pass(batch)


def wrap_learner_in_ddp(learner) -> None:
    """Wrap the built Learner's module; DDP broadcasts rank 0's weights so all Learners start equal.

    Parameters no loss uses (e.g. PPO's value head with use_critic=False) would make DDP wait for
    their gradients forever. One module: the set of used parameters is the same every step, so
    static_graph lets DDP learn it in the first step. Several modules: a minibatch may leave some
    module out, so DDP searches the graph for unused parameters every step.
    """
    from torch.nn.parallel import DistributedDataParallel

    device = learner.device
    several_modules = len(list(learner.module.keys())) > 1
    learner._ddp_module = DistributedDataParallel(
        _ForwardAndLosses(learner),
        device_ids=[device] if device.type == "cuda" else None,
        find_unused_parameters=several_modules,
        static_graph=not several_modules,
    )
    learner.peek_stat = _averaged_over_learners(learner.peek_stat, device)


def _averaged_over_learners(peek_stat, device):
    """peek_stat averaged over all Learners: hooks that adapt coefficients from a stat (PPO's KL
    coefficient) must see the same value everywhere, or the Learners' updates drift apart. Every
    Learner runs the same hooks in the same order, so they all reach this all-reduce together."""
    import torch.distributed as dist

    def peek(module_id, key, default=None):
        value = peek_stat(module_id, key, default=None)
        if value is None:  # no Learner logged it (the same minibatches ran everywhere)
            return default
        total = torch.tensor([float(value)], dtype=torch.float64, device=device)  # NCCL needs GPU tensors
        dist.all_reduce(total)
        return float(total) / dist.get_world_size()

    return peek
