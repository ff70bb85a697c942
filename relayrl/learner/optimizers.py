"""`Adam`: torch.optim.Adam without the ~1 s first-use import of torch._dynamo.

torch's optimizers wrap `add_param_group`, `zero_grad`, `state_dict`, `load_state_dict` and `step`
in decorators that import torch._dynamo (the compiler) on first call: about one second of
start-up for a run that never compiles anything. This subclass calls the undecorated methods
(torch keeps them as `__wrapped__`); the update itself is torch's own code, so results and
state dicts are identical to torch.optim.Adam (tested). If a torch version does not expose
`__wrapped__`, the decorated methods are used as they are.

Per minibatch of a small network torch's bookkeeping around the update costs more than the update,
so `zero_grad` and the fused step skip it too (same kernels, same numbers; tested).
"""
import torch
import torch.optim.optimizer as _optimizer_module

_Optimizer = torch.optim.Optimizer


def _undecorated(method):
    return getattr(method, "__wrapped__", method)


class Adam(torch.optim.Adam):
    add_param_group = _undecorated(_Optimizer.add_param_group)
    _torch_zero_grad = _undecorated(_Optimizer.zero_grad)
    state_dict = _undecorated(_Optimizer.state_dict)
    _torch_load_state_dict = _undecorated(_Optimizer.load_state_dict)
    _torch_step = _undecorated(torch.optim.Adam.step)

    def zero_grad(self, set_to_none: bool = True) -> None:
        # torch's version wraps this loop in a profiler region; per minibatch of a small net that costs
        # more than the loop itself. Same effect: every parameter's .grad becomes None.
        if not set_to_none:
            return self._torch_zero_grad(set_to_none=False)
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None

    def step(self, closure=None):
        if closure is None and self._fused_step():
            return None
        # torch's decorator only switches grad mode off (differentiable=False) around the update.
        with torch.no_grad():
            return self._torch_step(closure)

    def step_unhooked(self) -> None:
        """`step()` without the wrapper torch puts around every optimizer's step (a profiler region and the
        step hooks: ~10-20 us a call, a good part of a small net's fused update) when no step hook is
        registered; with one, the hooked `step()`."""
        if (self._optimizer_step_pre_hooks or self._optimizer_step_post_hooks
                or _optimizer_module._global_optimizer_pre_hooks or _optimizer_module._global_optimizer_post_hooks):
            self.step()
            return
        if not self._fused_step():
            with torch.no_grad():
                self._torch_step()

    def _fused_step(self) -> bool:
        """torch's fused Adam update, launched directly once every parameter has its state; False (nothing
        done) where torch's own step is needed: the first step, amsgrad, capturable, tensor lr or betas, mixed
        devices or dtypes.

        Same kernels, arguments and order as torch's fused path, so the results are identical; what it
        skips is torch's per-step list building and grouping, which costs more than the kernel for a small net.
        """
        work = self._fused_work()
        if work is None:
            return False
        with torch.no_grad():
            for group, params, exp_avgs, exp_avg_sqs, steps in work:
                grads = [p.grad for p in params]
                if any(g is None for g in grads):  # this step leaves some parameters alone: the general path
                    kept = [i for i, g in enumerate(grads) if g is not None]
                    if not kept:
                        continue
                    params, grads = [params[i] for i in kept], [grads[i] for i in kept]
                    exp_avgs, exp_avg_sqs, steps = ([x[i] for i in kept] for x in (exp_avgs, exp_avg_sqs, steps))
                torch._foreach_add_(steps, 1)
                beta1, beta2 = group["betas"]
                torch._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, [], steps, amsgrad=False,
                                   lr=group["lr"], beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"],
                                   eps=group["eps"], maximize=group["maximize"], grad_scale=None, found_inf=None)
        return True

    def _fused_work(self):
        """Per param group: (group, params, exp_avgs, exp_avg_sqs, steps) for the fused kernel, or None where
        torch's own step is needed (a parameter with a gradient has no state yet, mixed devices or dtypes, a
        group setting the fused kernel does not take). Kept between steps while every parameter has its state:
        the moment and step tensors are updated in place; a new state object, group or parameter rebuilds it."""
        key = (len(self.state), tuple((id(g), len(g["params"])) for g in self.param_groups))
        cached = self.__dict__.get("_fused_cache")
        if cached is not None and cached[0] == key and cached[2] is self.state:
            return cached[1] if all(_fusable(entry[0]) for entry in cached[1]) else None
        work, complete = [], True
        for group in self.param_groups:
            if not _fusable(group) or len({(p.device, p.dtype) for p in group["params"]}) > 1:
                return None
            states = [self.state.get(p) for p in group["params"]]
            if any(not state and p.grad is not None for p, state in zip(group["params"], states)):
                return None
            complete = complete and all(states)
            params = [p for p, state in zip(group["params"], states) if state]
            states = [state for state in states if state]
            work.append((group, params, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                         [s["step"] for s in states]))
        if complete:
            self.__dict__["_fused_cache"] = (key, work, self.state)
        return work

    def load_state_dict(self, state_dict):
        self.__dict__.pop("_fused_cache", None)
        return self._torch_load_state_dict(state_dict)


def _fusable(group) -> bool:
    return not (not group.get("fused") or group["amsgrad"] or group["capturable"] or group["differentiable"]
                or group.get("decoupled_weight_decay")
                or any(isinstance(v, torch.Tensor) for v in (group["lr"], *group["betas"])))


def make_adam(params, **kwargs) -> Adam:
    """The Learner's default optimizer: fused Adam (one kernel per step; ~5x faster than the
    per-tensor loop for small nets on CPU), falling back to the foreach/per-tensor versions where
    fused kernels are not available for the parameters' device or dtype."""
    params = list(params)
    for variant in ({"fused": True}, {"foreach": True}, {}):
        try:
            return Adam(params, **variant, **kwargs)
        except (RuntimeError, ValueError, TypeError):
            continue
    raise RuntimeError("Could not build an Adam optimizer for these parameters.")
