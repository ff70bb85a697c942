"""The agent -> module mapping of a multi-agent config, checked, and which modules train.

`checked_mapping_fn` wraps `policy_mapping_fn` so that a module id outside `policies` raises at once,
naming the agent, the returned id and the known ones (otherwise the agent's data would go to a
module that does not exist, failing much later). `trains_module` answers `policies_to_train`.
"""
import inspect
from typing import Any, Callable, Dict, Optional

from relayrl.core.columns import DEFAULT_MODULE_ID


class UnknownModuleIdError(ValueError):
    """policy_mapping_fn returned a module id that is not in config.multi_agent(policies=...)."""


def checked_mapping_fn(policy_mapping_fn: Optional[Callable], policies: Optional[Dict[str, Any]]) -> Callable:
    known = list(policies or {DEFAULT_MODULE_ID: None})
    wants_worker = _requires_worker(policy_mapping_fn)

    def mapping_fn(agent_id, episode, **kwargs) -> str:
        if wants_worker:
            kwargs.setdefault("worker", None)
        module_id = DEFAULT_MODULE_ID if policy_mapping_fn is None else policy_mapping_fn(agent_id, episode, **kwargs)
        if module_id not in known:
            what = "policy_mapping_fn" if policy_mapping_fn else "the default mapping (no policy_mapping_fn)"
            raise UnknownModuleIdError(
                f"{what} mapped agent {agent_id!r} to module {module_id!r}, which is not one of the policies "
                f"{known}; return one of them, or add {module_id!r} to config.multi_agent(policies=...).")
        return module_id

    mapping_fn.policy_mapping_fn = policy_mapping_fn
    return mapping_fn


def _requires_worker(policy_mapping_fn: Optional[Callable]) -> bool:
    """RLlib's old stack called `policy_mapping_fn(agent_id, episode, worker, **kwargs)`; ported functions that
    require `worker` get `worker=None` (RLlib's new stack passes no worker either)."""
    try:
        parameter = inspect.signature(policy_mapping_fn).parameters.get("worker")
    except (TypeError, ValueError):  # None, or a callable without a signature
        return False
    return parameter is not None and parameter.default is inspect.Parameter.empty and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def trains_module(policies_to_train, module_id: str, batch=None) -> bool:
    """Whether `module_id` is trained under `policies_to_train` (None: every module)."""
    if policies_to_train is None:
        return True
    if callable(policies_to_train):
        return bool(policies_to_train(module_id, batch))
    return module_id in policies_to_train


__all__ = ["UnknownModuleIdError", "checked_mapping_fn", "trains_module"]
