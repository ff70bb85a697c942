"""`Adam`: torch.optim.Adam without the ~1 s first-use import of torch._dynamo.

torch's optimizers wrap `add_param_group`, `zero_grad`, `state_dict`, `load_state_dict` and `step`
in decorators that import torch._dynamo (the compiler) on first call: about one second of
start-up for a run that never compiles anything. This subclass calls the undecorated methods
(torch keeps them as `__wrapped__`); the update itself is torch's own code, so results and
state dicts are identical to torch.optim.Adam (tested). If a torch version does not expose
`__wrapped__`, the decorated methods are used as they are.
"""
import torch

_Optimizer = torch.optim.Optimizer


def _undecorated(method):
    return getattr(method, "__wrapped__", method)


class Adam(torch.optim.Adam):
    add_param_group = _undecorated(_Optimizer.add_param_group)
    zero_grad = _undecorated(_Optimizer.zero_grad)
    state_dict = _undecorated(_Optimizer.state_dict)
    load_state_dict = _undecorated(_Optimizer.load_state_dict)
    _torch_step = _undecorated(torch.optim.Adam.step)

    def step(self, closure=None):
        # torch's decorator only switches grad mode off (differentiable=False) around the update.
        with torch.no_grad():
            return self._torch_step(closure)


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
