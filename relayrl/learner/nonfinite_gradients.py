"""The Learner's guard that no NaN or inf gradient reaches an optimizer step.

Once per minibatch, between backward() and gradient clipping, one fused kernel checks the gradients of
every optimizer about to step (torch's GradScaler check, `_amp_foreach_non_finite_check_and_unscale_`,
with a scale of exactly 1: it reads the gradients and leaves them bit for bit as they are) and one
`.item()` reads the result: a single device sync. Only when it finds something does the slow path walk
the parameters one by one to name the first bad one.

When the Learner will clip by global norm over exactly the parameters its optimizers step (PPO's and
DQN's defaults), the check computes that norm instead (NaN or inf in any element makes it NaN or inf)
and the clipping reuses it: the check then costs one `.item()` and no kernel of its own. A norm that
overflowed although every element is finite is not a non-finite gradient: the element check decides.

Checking before clipping, not after: clipping by global norm turns one inf element into NaN everywhere
(the scale max_norm / inf is 0, and inf * 0 is NaN), so after it every parameter would look guilty, and
clipping by value would hide an inf.

Parameters after the step are not checked: with finite gradients, a finite learning rate and Adam's
bounded step (per element at most max(1, (1 - beta1) / sqrt(1 - beta2)) * lr, about 3.2 * lr with the
default betas; Kingma & Ba, section 2.1), finite weights stay finite, and undoing a step that had already
happened would need a copy of every weight and moment per step. A custom optimizer that can turn finite
weights and gradients into inf is not covered.
"""
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import torch


class NonFiniteGradient(NamedTuple):
    module_id: str
    parameter: str  # its name in the module (or the Learner's name for it, e.g. SAC's log-alpha)
    optimizer: str
    kind: str  # "NaN" or "inf"


class NonFiniteGradientError(FloatingPointError):
    """A gradient is NaN or inf although the loss is finite; raised before any optimizer stepped."""

    def __init__(self, message: str, culprits: Tuple[NonFiniteGradient, ...] = ()):
        super().__init__(message)
        self.culprits = tuple(culprits)

    def __reduce__(self):  # pickles (Ray sends it from remote Learners) with its culprits
        return type(self), (str(self), self.culprits)

    @property
    def module_id(self) -> str:
        return self.culprits[0].module_id if self.culprits else ""

    @property
    def parameter(self) -> str:
        return self.culprits[0].parameter if self.culprits else ""

    @classmethod
    def for_culprits(cls, culprits: Dict[str, NonFiniteGradient]) -> "NonFiniteGradientError":
        where = "; ".join(f"module `{c.module_id}`: parameter `{c.parameter}` (optimizer `{c.optimizer}`) "
                          f"has {c.kind} in its gradient" for c in culprits.values())
        return cls(
            f"Non-finite gradient although the loss is finite -- {where}. The update stopped before the "
            "optimizer step: weights and optimizer state are as they were before this minibatch. Look for "
            "operations with an infinite derivative at the loss's inputs (sqrt or log at 0, division by ~0, "
            "pow with a fractional exponent), lower the learning rate or set grad_clip, or skip such "
            "minibatches with config.debugging(on_nonfinite_gradient='skip').",
            tuple(culprits.values()))


class FiniteGradientCheck:
    """Per Learner: which parameters the optimizers of a set of modules step, and the device flags."""

    def __init__(self):
        self._parameters: Dict[tuple, List[torch.nn.Parameter]] = {}  # module ids -> their optimizers' params
        self._steps_exactly: Dict[str, tuple] = {}  # module id -> (params list, do its optimizers step exactly it)
        self._flags: Dict[torch.device, Tuple[torch.Tensor, torch.Tensor]] = {}  # device -> (found, scale 1)

    def forget_parameters(self) -> None:
        """Call when optimizers change (register_optimizer does)."""
        self._parameters, self._steps_exactly = {}, {}

    def global_norms(self, optimizers, gradients: Dict[str, list]) -> Optional[Dict[str, torch.Tensor]]:
        """{module_id: the global L2 norm of the gradients of `gradients[module_id]`}, computed as clipping by
        global norm computes it, if each module's optimizers step exactly those parameters (so the norm covers
        everything the check must cover) on one device and dtype; None otherwise."""
        norms = {}
        for module_id, params in gradients.items():
            cached = self._steps_exactly.get(module_id)
            if cached is None or cached[0] is not params:
                stepped = {id(p) for p in self._parameters_of(optimizers, (module_id,))}
                cached = self._steps_exactly[module_id] = (params, stepped == {id(p) for p in params})
            if not cached[1]:
                return None
            grads = [p.grad for p in params if p.grad is not None]
            if grads:
                norm = global_grad_norm(grads)
                if norm is None:
                    return None
                norms[module_id] = norm
        return norms

    def all_finite(self, optimizers: Dict[str, Dict[str, torch.optim.Optimizer]], module_ids,
                   poison: Optional[torch.Tensor] = None) -> bool:
        """True if every gradient that the optimizers of `module_ids` would apply is finite (and `poison`, a
        0-d tensor read in the same sync, is not NaN)."""
        grads = [p.grad for p in self._parameters_of(optimizers, module_ids) if p.grad is not None]
        if not grads:
            return poison is None or not bool(torch.isnan(poison))
        found, scale = self._flags_on(grads[0].device)  # `found` stays 0 between calls while all is finite
        try:
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found, scale)
        except (RuntimeError, TypeError, NotImplementedError):  # e.g. gradients on several devices, sparse
            found.zero_()
            return all(_finite(g) for g in grads) and (poison is None or not bool(torch.isnan(poison)))
        if poison is not None:
            found.add_(torch.isnan(poison).to(found.dtype))
        if not found.item():
            return True
        found.zero_()
        return False

    def first_nonfinite(self, optimizers, module_ids,
                        parameter_names: Callable[[str], Dict[int, str]]) -> Dict[str, NonFiniteGradient]:
        """{module_id: its first parameter (in optimizer order) whose gradient is not finite}; slow path only."""
        culprits = {}
        for module_id in module_ids:
            for optimizer_name, label, param in _optimizer_parameters(optimizers, module_id):
                if param.grad is not None and not _finite(param.grad):
                    grad = param.grad._values() if param.grad.is_sparse else param.grad
                    name = parameter_names(module_id).get(id(param), label)
                    kind = "NaN" if bool(torch.isnan(grad).any()) else "inf"
                    culprits[module_id] = NonFiniteGradient(module_id, name, optimizer_name, kind)
                    break
        return culprits

    def _parameters_of(self, optimizers, module_ids) -> List[torch.nn.Parameter]:
        key = tuple(module_ids)
        params = self._parameters.get(key)
        if params is None:
            seen, params = set(), []
            for module_id in key:
                for _, _, param in _optimizer_parameters(optimizers, module_id):
                    if id(param) not in seen:
                        seen.add(id(param))
                        params.append(param)
            self._parameters[key] = params
        return params

    def _flags_on(self, device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
        flags = self._flags.get(device)
        if flags is None:
            flags = self._flags[device] = (torch.zeros(1, device=device), torch.ones(1, device=device))
        return flags


def global_grad_norm(grads: List[torch.Tensor]) -> Optional[torch.Tensor]:
    """The L2 norm over all `grads` with torch.nn.utils.clip_grad_norm_'s kernels (same number); None for
    gradients on several devices or dtypes (clip_grad_norm_ groups those)."""
    if len({(g.device, g.dtype) for g in grads}) != 1:
        return None
    with torch.no_grad():
        return torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))


def _optimizer_parameters(optimizers, module_id) -> Iterator[Tuple[str, str, torch.nn.Parameter]]:
    """(optimizer name, a label for a parameter without a name, parameter) for the module's optimizers."""
    for optimizer_name, optimizer in optimizers.get(module_id, {}).items():
        for g, group in enumerate(optimizer.param_groups):
            for i, param in enumerate(group["params"]):
                yield optimizer_name, f"{optimizer_name}.param_groups[{g}]['params'][{i}]", param


def _finite(grad: torch.Tensor) -> bool:
    return bool(torch.isfinite(grad._values() if grad.is_sparse else grad).all())
