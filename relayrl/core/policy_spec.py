"""`PolicySpec`: what `config.multi_agent(policies={...})` says about one policy (RLlib's dataclass).

On the new API stack a policy is an RLModule: `observation_space` / `action_space` (None: inferred from the
agents that map to it) give its module's spaces, and `config` (a dict of option overrides) is kept for the
old stack's per-policy settings. `policy_class` is the old stack's Policy class (None: the algorithm's).
"""
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class PolicySpec:
    _checkpoint_kind = "policy spec"  # a stored config may name this class (checkpoints/trust.py)

    policy_class: Optional[type] = None
    observation_space: Any = None
    action_space: Any = None
    config: Optional[dict] = None


__all__ = ["PolicySpec"]
