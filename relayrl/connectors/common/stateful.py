"""Helpers shared by the pieces that serve stateful (recurrent) RLModules."""
import numpy as np

from relayrl.core.columns import DEFAULT_MODULE_ID


def single_module(rl_module):
    """The module a single-agent pipeline feeds (the Learner holds a MultiRLModule)."""
    from relayrl.modules.multi_rl_module import MultiRLModule

    if isinstance(rl_module, MultiRLModule):
        return rl_module.get(DEFAULT_MODULE_ID)
    return rl_module


def is_stateful(rl_module) -> bool:
    # Asked by several pieces on every env step: remember the answer on the module.
    if rl_module is None:
        return False
    cached = getattr(rl_module, "_relayrl_is_stateful", None)
    if cached is None:
        module = single_module(rl_module)
        cached = module is not None and module.is_stateful()
        object.__setattr__(rl_module, "_relayrl_is_stateful", cached)
    return cached


def max_seq_len(rl_module) -> int:
    return int(single_module(rl_module).model_config.get("max_seq_len", 20))


def initial_state_numpy(rl_module):
    """The module's initial state as numpy (tensors converted), without a batch axis."""
    def convert(x):
        if isinstance(x, dict):
            return {k: convert(v) for k, v in x.items()}
        return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)

    return convert(single_module(rl_module).get_initial_state())
