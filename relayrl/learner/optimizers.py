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

_Optimizer = torch.optim.Optimizer


def _undecorated(method):
    return getattr(method, "__wrapped__", method)


class Adam(torch.optim.Adam):
    add_param_group = _undecorated(_Optimizer.add_param_group)
    _torch_zero_grad = _undecorated(_Optimizer.zero_grad)
    state_dict = _undecorated(_Optimizer.state_dict)
    load_state_dict = _undecorated(_Optimizer.load_state_dict)
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

    def _fused_step(self) -> bool:
        """torch's fused Adam update, launched directly once every parameter has its state; False (nothing
        done) where torch's own step is needed: the first step, amsgrad, capturable, tensor lr or betas, mixed
        devices or dtypes.

        Same kernels, arguments and order as torch's fused path, so the results are identical; what it
        skips is torch's per-step list building and grouping, which costs more than the kernel for a small net.
        """
        work = []
        for group in self.param_groups:
            if (not group.get("fused") or group["amsgrad"] or group["capturable"] or group["differentiable"]
                    or group.get("decoupled_weight_decay")
                    or any(isinstance(v, torch.Tensor) for v in (group["lr"], *group["betas"]))):
                return False
            params = [p for p in group["params"] if p.grad is not None]
            states = [self.state.get(p) for p in params]
            if not all(states) or len({(p.device, p.dtype) for p in params}) > 1:
                return False
            work.append((group, params, states))
        with torch.no_grad():
            for group, params, states in work:
                if not params:
                    continue
                steps = [state["step"] for state in states]
                torch._foreach_add_(steps, 1)
                beta1, beta2 = group["betas"]
                torch._fused_adam_(params, [p.grad for p in params], [state["exp_avg"] for state in states],
                                   [state["exp_avg_sq"] for state in states], [], steps, amsgrad=False,
                                   lr=group["lr"], beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"],
                                   eps=group["eps"], maximize=group["maximize"], grad_scale=None, found_inf=None)
        return True


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
