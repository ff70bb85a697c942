"""torch.compile for the Learner: `config.framework(torch_compile_learner=True)` (RLlib's option names).

What is compiled (`torch_compile_learner_what_to_compile`):
- "forward_train": each RLModule's forward_train, one compiled function per module, made when the module
  first trains (modules added later are compiled too). The losses run eagerly.
- "complete_update": forward_train and the module's loss as one compiled function per module, so the
  backward pass is one compiled graph as well. RLlib's "complete_update" also compiles the optimizer step;
  here the gradient check, clipping and the optimizer step stay eager (each syncs on a value and branches
  on it). A Learner
  whose loss does not compile well (`LOSS_COMPILES = False`: IMPALA's and APPO's V-trace), or that overrides
  `compute_losses` (its losses need not be one per module), gets forward_train compiled instead, with a warning.

The module itself is not wrapped: state_dict keys, checkpoints and weight syncs are those of an eager run.
Compiling takes seconds (small MLPs) to a minute on the first update, and again once when a batch's shape
first changes (torch then compiles a dynamic-shape graph), so it pays off in long runs only; measured
figures are in docs/learners.md#compiling-the-learner.
"""
import logging
from typing import Any, Callable, Dict

import torch

logger = logging.getLogger(__name__)


# Learner methods with Python side effects (appending to lists, reading a value) that losses call: with a
# compiled loss they run eagerly between its compiled parts (a traced list append would recompile every update).
# A custom Learner's own such helpers want `@torch.compiler.disable` too.
EAGER_METHODS = ("log_stats", "log_row_stats", "keep_td_errors", "_keep_value_fit", "_check_losses_finite")


def check_backend(name: str) -> None:
    """A clear error for a backend torch.compile does not know (instead of one at the first update)."""
    import torch._dynamo

    known = torch._dynamo.list_backends(exclude_tags=())
    if name not in known:
        raise ValueError(f"torch_compile_learner_dynamo_backend={name!r} is not a torch.compile backend; use one of "
                         f"{sorted(known)} (default 'inductor').")


class CompiledTrainPass:
    """`train_pass(batch) -> (fwd_out, loss_per_module)`, the Learner's forward pass and losses, compiled
    per module (a compiled function per module; compute_losses' loop over modules stays in Python)."""

    def __init__(self, learner, *, what: str, backend: str, mode=None):
        check_backend(backend)
        for name in EAGER_METHODS:  # on this Learner only: an eager run never imports torch's compiler
            method = getattr(learner, name, None)
            if method is not None:
                setattr(learner, name, torch.compiler.disable(method))
        self._learner = learner
        self._complete = what == "complete_update"
        if self._complete and not type(learner).LOSS_COMPILES:
            logger.warning("torch_compile_learner_what_to_compile='complete_update': %s's loss does not compile "
                           "well (it would recompile for every batch); compiling forward_train only.",
                           type(learner).__name__)
            self._complete = False
        if self._complete and _overrides_compute_losses(learner):  # its losses are not per module: keep them whole
            logger.warning("torch_compile_learner_what_to_compile='complete_update': %s overrides compute_losses, "
                           "which runs eagerly; compiling forward_train only.", type(learner).__name__)
            self._complete = False
        self._compile: Callable = lambda fn: torch.compile(fn, backend=backend, mode=mode)
        self._forwards: Dict[str, tuple] = {}  # module id -> (module, its compiled forward_train)
        self._passes: Dict[str, tuple] = {}  # module id -> (module, its compiled forward_train + loss)

    def __call__(self, batch: Dict[str, Any]):
        learner = self._learner
        modules = learner.module
        if not self._complete:
            fwd_out = {mid: self._compiled(self._forwards, mid, _forward_of)(sub) for mid, sub in batch.items()
                       if mid in modules}
            return fwd_out, learner.compute_losses(fwd_out=fwd_out, batch=batch)
        fwd_out, losses = {}, {}
        for mid, sub in batch.items():
            if mid not in modules:
                continue
            if learner.should_module_be_updated(mid, batch):
                fwd_out[mid], loss = self._compiled(self._passes, mid, _forward_and_loss_of)(sub)
                losses[mid] = learner._checked_loss(mid, loss)
            else:  # (its forward pass is part of the output, no loss)
                fwd_out[mid] = modules[mid].forward_train(sub)
        return fwd_out, losses

    def _compiled(self, cache: Dict[str, tuple], module_id: str, make: Callable) -> Callable:
        module = self._learner.module[module_id]
        cached = cache.get(module_id)
        if cached is None or cached[0] is not module:  # (a module replaced under the same id is compiled anew)
            cached = cache[module_id] = (module, self._compile(make(self._learner, module_id, module)))
        return cached[1]


def _overrides_compute_losses(learner) -> bool:
    from relayrl.learner.learner import Learner

    return type(learner).compute_losses is not Learner.compute_losses


def _forward_of(learner, module_id: str, module) -> Callable:
    return module.forward_train


def _forward_and_loss_of(learner, module_id: str, module) -> Callable:
    def forward_and_loss(batch):
        fwd_out = module.forward_train(batch)
        return fwd_out, learner.compute_loss_for_module(module_id=module_id, config=learner.config, batch=batch,
                                                        fwd_out=fwd_out)
    return forward_and_loss


def train_pass_for(learner) -> Callable:
    """The Learner's forward-and-losses pass: compiled if its config asks for it, else the eager method."""
    config = learner.config
    if not getattr(config, "torch_compile_learner", False):
        return learner._forward_and_losses
    return CompiledTrainPass(learner, what=config.torch_compile_learner_what_to_compile,
                             backend=config.torch_compile_learner_dynamo_backend,
                             mode=config.torch_compile_learner_dynamo_mode)
