"""Remote Learners: `num_learners` Ray actors of the algorithm's own Learner class.

`LearnerActor` builds the same Learner the driver would and only forwards calls to it. With more
than one actor they form a torch.distributed process group (gloo on CPU, NCCL when every Learner
has a GPU) and wrap the module in DistributedDataParallel; each update then sends the whole
train batch (or the episodes) to every actor through Ray's object store, and each actor trains on
its shard (learner_sharding.py), so all actors apply identical updates.
"""
import logging
import pickle
import random
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import torch

logger = logging.getLogger("relayrl")


class LearnerActor:
    """Runs inside a Ray actor: one Learner, plus its place in the data-parallel group."""

    def __init__(self, *, learner_class, config, module_spec, spaces, rank: int, world_size: int):
        self.rank, self.world_size = rank, world_size
        if config.seed is not None:  # the same initial weights everywhere (DDP also broadcasts rank 0's)
            random.seed(config.seed)
            np.random.seed(config.seed)
            torch.manual_seed(config.seed)
        self.learner = learner_class(config=config, module_spec=module_spec, spaces=spaces)
        self.learner.build()  # on cuda:0 (the GPU Ray assigned) with num_gpus_per_learner > 0
        if config.seed is not None:  # each Learner shuffles its own shard differently
            torch.manual_seed(config.seed + rank)

    # -- the process group -------------------------------------------------------------------------
    def free_port_address(self):
        from relayrl.distributed.learner_ddp import free_port_address

        return free_port_address()

    def has_gpu(self) -> bool:
        return self.learner.device.type == "cuda"

    def join_process_group(self, address: str, port: int, backend: str) -> None:
        from relayrl.distributed.learner_ddp import init_process_group, wrap_learner_in_ddp

        init_process_group(address=address, port=port, rank=self.rank, world_size=self.world_size, backend=backend)
        wrap_learner_in_ddp(self.learner)

    # -- forwarded calls ---------------------------------------------------------------------------
    def update(self, *, episodes=None, batch=None, minibatch_size=None, **kwargs) -> Dict[str, Any]:
        if self.world_size == 1:
            return self.learner.update(episodes=episodes, batch=batch, minibatch_size=minibatch_size, **kwargs)
        from relayrl.distributed.learner_sharding import shard_batch

        learner = self.learner
        if episodes is not None:
            # Every Learner builds the whole batch (same weights, same connector state), then keeps its shard.
            batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes, explore=False,
                                               shared_data={}, metrics=learner.metrics)
        # (Runners' columns likewise: every Learner runs the pipeline's remaining pieces on the whole batch.)
        batch = learner._finish_runner_columns(batch)
        shard, shard_minibatch_size = shard_batch(learner._as_module_batch(batch), self.rank, self.world_size,
                                                  minibatch_size or learner.config.minibatch_size)
        return learner.update(batch=shard, minibatch_size=shard_minibatch_size, **kwargs)

    def update_from_pickled(self, kind: str, data: bytes, **kwargs) -> Dict[str, Any]:
        """update(episodes= or batch=) from pickled data: unpickling gives writable arrays (Ray's own
        zero-copy reads are read-only, and torch tensors made from them must never be written to)."""
        return self.update(**{kind: pickle.loads(data)}, **kwargs)

    def apply(self, func: Callable, *args, **kwargs):
        return func(self.learner, *args, **kwargs)

    def get_weights(self, module_ids=None, inference_only: bool = False):
        return _to_cpu(self.learner.get_weights(module_ids=module_ids, inference_only=inference_only))

    def set_weights(self, weights) -> None:
        self.learner.set_weights(weights)

    def weights_version(self):
        from relayrl.learner.weights_version import weights_version

        return weights_version(self.learner)

    def get_state(self, components=None, *, not_components=None, **kwargs):
        return _to_cpu(self.learner.get_state(components, not_components=not_components, **kwargs))

    def set_state(self, state, partial_modules: bool = False) -> None:
        from relayrl.modules.partial_module_state import partial_module_states

        with partial_module_states(partial_modules):  # the driver's context does not cross into the actor
            self.learner.set_state(state)

    def check_state(self, state, where, partial_modules: bool = False) -> None:
        from relayrl.modules.partial_module_state import partial_module_states

        with partial_module_states(partial_modules):
            self.learner.check_state(state, where)

    def shutdown(self) -> None:
        from relayrl.distributed.learner_ddp import destroy_process_group

        self.learner.shutdown()
        destroy_process_group()


def _to_cpu(tree):
    """Tensors leave the actor on the CPU (the driver may have no GPU)."""
    if isinstance(tree, dict):
        return {k: _to_cpu(v) for k, v in tree.items()}
    if isinstance(tree, torch.Tensor):
        return tree.detach().cpu()
    return tree


def _writable(tree):
    if isinstance(tree, dict):
        return {k: _writable(v) for k, v in tree.items()}
    if isinstance(tree, np.ndarray) and not tree.flags.writeable:
        return tree.copy()
    return tree


class RemoteLearners:
    """The driver's handle on the Learner actors (what LearnerGroup uses when num_learners > 0)."""

    def __init__(self, *, config, module_spec, spaces):
        import ray

        from relayrl.distributed.learner_sharding import per_learner_minibatch_size

        self.num_learners = config.num_learners
        self.num_gpus_per_learner = config.num_gpus_per_learner
        per_learner_minibatch_size(config.minibatch_size, self.num_learners)  # fail early on a bad size
        if not ray.is_initialized():  # else: the user's ray.init(address=...) or an earlier call
            ray.init(include_dashboard=False)
        cpus = config.num_cpus_per_learner
        if cpus == "auto":  # RLlib's rule: 1 CPU for a CPU Learner, none besides a GPU
            cpus = 0 if self.num_gpus_per_learner else 1
        actor_cls = ray.remote(LearnerActor).options(num_cpus=cpus, num_gpus=self.num_gpus_per_learner)
        self.actors = [actor_cls.remote(learner_class=config.learner_class, config=config, module_spec=module_spec,
                                        spaces=spaces, rank=rank, world_size=self.num_learners)
                       for rank in range(self.num_learners)]
        try:
            if self.num_learners > 1:
                self._form_process_group()
            else:
                ray.get(self.actors[0].has_gpu.remote())  # surface build errors here
        except Exception:
            self.shutdown()
            raise

    def _form_process_group(self) -> None:
        import ray

        # NCCL needs a whole GPU per Learner (it refuses two ranks on one GPU); gloo also all-reduces GPU tensors.
        all_gpus = all(ray.get([actor.has_gpu.remote() for actor in self.actors]))
        backend = "nccl" if all_gpus and self.num_gpus_per_learner >= 1 else "gloo"
        address, port = ray.get(self.actors[0].free_port_address.remote())
        ray.get([actor.join_process_group.remote(address, port, backend) for actor in self.actors])
        logger.info("%d Learners joined a %s process group at %s:%d", self.num_learners, backend, address, port)

    def update(self, *, episodes=None, batch=None, **kwargs) -> Dict[str, Any]:
        import ray

        if (episodes is None) == (batch is None):
            raise ValueError("LearnerGroup.update() needs exactly one of `episodes` or `batch`.")
        kind = "episodes" if episodes is not None else "batch"
        data = ray.put(ray.cloudpickle.dumps(episodes if episodes is not None else batch))  # once, for every actor
        refs = [actor.update_from_pickled.remote(kind, data, **kwargs) for actor in self.actors]
        pending = refs
        while pending:  # raise a Learner's error at once, not after its peers time out waiting for it
            done, pending = ray.wait(pending, num_returns=1)
            ray.get(done[0])
        results = ray.get(refs)
        return None if results[0] is None else reduce_learner_results(results)  # None: reduce_metrics=False

    def foreach_learner(self, func: Callable, *args, **kwargs) -> List[Any]:
        import ray

        return ray.get([actor.apply.remote(func, *args, **kwargs) for actor in self.actors])

    def call_first(self, method: str, *args, **kwargs):
        """The first Learner's answer; arrays copied (Ray hands out read-only views of its object store)."""
        import ray

        return _writable(ray.get(getattr(self.actors[0], method).remote(*args, **kwargs)))

    def call_all(self, method: str, *args, **kwargs) -> List[Any]:
        import ray

        return ray.get([getattr(actor, method).remote(*args, **kwargs) for actor in self.actors])

    def shutdown(self) -> None:
        import ray

        actors, self.actors = self.actors, []
        try:
            ray.get([actor.shutdown.remote() for actor in actors], timeout=30)
        except Exception as error:  # a dead actor cannot shut down; it is killed below anyway
            logger.warning("Learner actor shutdown failed: %s", error)
        for actor in actors:
            ray.kill(actor)


def reduce_learner_results(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One result dict from the Learners': counts (keys starting with `num_`) summed, the rest averaged."""
    if len(results) == 1:
        return results[0]
    merged: Dict[str, Any] = {}
    for key in results[0]:
        values = [r[key] for r in results if key in r]
        if isinstance(values[0], dict):
            merged[key] = reduce_learner_results(values)
        elif _is_number(values[0]):
            total = sum(values)
            merged[key] = total if str(key).startswith("num_") else total / len(values)
        else:
            merged[key] = values[0]
    return merged


def _is_number(value: Optional[Any]) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
