"""`config.multi_agent(...)`: which modules (policies) exist, which agent each module acts for, which
modules train, and how steps are counted (RLlib's semantics).

    config.multi_agent(
        policies={"p0", "p1"},                                   # or {"p0": PolicySpec(...), ...}
        policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}",
        policies_to_train=["p0"],                                # or a callable (module_id, batch) -> bool
        count_steps_by="env_steps",                              # or "agent_steps"
    )

`policies` is stored as {module_id: PolicySpec}. Setting it makes the config multi-agent: the
EnvRunners become MultiAgentEnvRunners and the Learners hold one module per policy.
"""
from typing import Any, Callable, Dict, Mapping, Optional

from relayrl.algorithms.options import Check, Option, one_of
from relayrl.core.policy_spec import PolicySpec


def _normalize_policies(value: Any) -> Optional[Dict[str, PolicySpec]]:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {str(mid): _as_policy_spec(mid, spec) for mid, spec in value.items()}
    return {str(mid): PolicySpec() for mid in sorted(value, key=str)}


def _as_policy_spec(module_id, spec) -> PolicySpec:
    if spec is None:
        return PolicySpec()
    if isinstance(spec, PolicySpec):
        return spec
    if isinstance(spec, (tuple, list)) and len(spec) == 4:  # the old stack's (class, obs, act, config)
        return PolicySpec(*spec)
    raise ValueError(f"policies[{module_id!r}] is {spec!r}; give a PolicySpec(...) (or None for the defaults).")


def _policies_ok(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return False
    if isinstance(value, Mapping):
        return bool(value) and all(isinstance(k, str) for k in value)
    try:
        ids = list(value)
    except TypeError:
        return False
    return bool(ids) and all(isinstance(k, str) for k in ids)


_POLICIES = Check("None, a non-empty set/list of module ids (str), or a dict {module_id: PolicySpec | None}",
                  _policies_ok, Optional[Any], normalize=_normalize_policies)
_TO_TRAIN = Check("None (all), a collection of module ids, or a callable (module_id, batch) -> bool",
                  lambda v: v is None or callable(v) or (not isinstance(v, str) and hasattr(v, "__iter__")),
                  Optional[Any], normalize=lambda v: v if v is None or callable(v) else sorted(v))
_MAPPING_FN = Check("a callable (agent_id, episode, **kwargs) -> module_id, or None",
                    lambda v: v is None or callable(v), Optional[Callable])

MULTI_AGENT_OPTIONS = (
    Option("policies", None, "The modules: a set of module ids or {module_id: PolicySpec}; None: "
           "single-agent.", "multi_agent", _POLICIES, cli=False),
    Option("policy_mapping_fn", None, "(agent_id, episode, **kwargs) -> the module id acting for the "
           "agent (asked once per agent per episode); None maps every agent to default_policy.",
           "multi_agent", _MAPPING_FN, cli=False),
    Option("policies_to_train", None, "The modules the Learner updates (list, or a callable (module_id, "
           "batch) -> bool); None: all. The others' weights stay as they are.", "multi_agent", _TO_TRAIN,
           cli=False),
    Option("count_steps_by", "env_steps", "What rollout_fragment_length and train_batch_size count in "
           "multi-agent runs: env steps, or agent steps (one per acting agent).", "multi_agent",
           one_of("env_steps", "agent_steps")),
)

MULTI_AGENT_GROUP_HELP = {
    "multi_agent": "Sets the modules of a multi-agent run, which agent maps to which module, which modules "
                   "train, and how steps are counted.",
}

__all__ = ["MULTI_AGENT_OPTIONS", "MULTI_AGENT_GROUP_HELP"]
