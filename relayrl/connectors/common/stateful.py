"""Helpers shared by the pieces that serve stateful (recurrent) RLModules."""
import numpy as np

from relayrl.core.columns import DEFAULT_MODULE_ID

_MULTI_RL_MODULE = None  # relayrl.modules.multi_rl_module.MultiRLModule, imported on first use (it imports torch)


def is_multi_rl_module(rl_module) -> bool:
    global _MULTI_RL_MODULE
    if _MULTI_RL_MODULE is None:
        from relayrl.modules.multi_rl_module import MultiRLModule

        _MULTI_RL_MODULE = MultiRLModule
    return isinstance(rl_module, _MULTI_RL_MODULE)


def single_module(rl_module):
    """The module a single-agent pipeline feeds (the Learner holds a MultiRLModule)."""
    if is_multi_rl_module(rl_module):
        return rl_module.get(DEFAULT_MODULE_ID)
    return rl_module


def is_stateful(rl_module) -> bool:
    """Whether any module the pipeline feeds is stateful (multi-agent: any of the MultiRLModule's modules)."""
    # Asked by several pieces on every env step: remember the answer on the module.
    if rl_module is None:
        return False
    cached = getattr(rl_module, "_relayrl_is_stateful", None)
    if cached is None:
        cached = bool(rl_module.is_stateful())
        object.__setattr__(rl_module, "_relayrl_is_stateful", cached)
    return cached


def stateless_module_ids(rl_module) -> frozenset:
    """The ids of a MultiRLModule's stateless modules: in a multi-agent pipeline their agents' items (keyed
    `(eps_id, agent_id, module_id)`) get no time axis and no state. Empty for a single module."""
    if not is_multi_rl_module(rl_module):
        return frozenset()
    return frozenset(module_id for module_id, module in rl_module.items() if not module.is_stateful())


def is_stateless_key(key, stateless: frozenset) -> bool:
    """Whether a batch key belongs to an agent of a stateless module (`stateless`: from stateless_module_ids)."""
    return len(key) == 3 and key[2] in stateless


def module_for_key(rl_module, key):
    """The module that serves a batch key: `(eps_id, agent_id, module_id)` in multi-agent pipelines, else the one
    module (a single-agent Learner's MultiRLModule holds it under DEFAULT_MODULE_ID)."""
    if len(key) == 3 and is_multi_rl_module(rl_module) and key[2] in rl_module:
        return rl_module[key[2]]
    return single_module(rl_module)


def module_for_episode(rl_module, episode):
    """The module that serves a single-agent episode (an agent's episode: its module id)."""
    if episode.agent_id is not None and is_multi_rl_module(rl_module) and episode.module_id in rl_module:
        return rl_module[episode.module_id]
    return single_module(rl_module)


def max_seq_len(rl_module) -> int:
    return int(single_module(rl_module).model_config.get("max_seq_len", 20))


def initial_state_numpy(rl_module):
    """The module's initial state as numpy (tensors converted), without a batch axis."""
    def convert(x):
        if isinstance(x, dict):
            return {k: convert(v) for k, v in x.items()}
        return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)

    return convert(single_module(rl_module).get_initial_state())
