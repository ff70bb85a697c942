"""A Policy's checkpoint: data only (weights as tensors/arrays, the rest JSON), like relayrl's other checkpoints.

The class and spaces are stored by name and description (checkpoints/by_name.py); loading resolves the class
through a Trust, so it runs no code the caller did not import or trust.
"""
from typing import Any

from relayrl.checkpoints.by_name import Unstorable, describe, rebuild
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.format import read_manifest, read_state, write_checkpoint
from relayrl.checkpoints.state_checks import Where, unexpected_error
from relayrl.checkpoints.trust import Trust
from relayrl.checkpoints.untrusted_names import NameCheck
from relayrl.core.policy_spec import PolicySpec


# The algorithm's multi-agent setup, in every policy's config: it names the other policies' classes and the
# mapping function, which one policy does not need, and restoring it would need them all trusted.
MULTI_AGENT_SETUP_KEYS = ("policies", "policy_mapping_fn", "policies_to_train", "multiagent")


def write_policy_checkpoint(policy, export_dir: str, state: dict[str, Any]) -> str:
    state = dict(state)
    spec = state["policy_spec"]
    if isinstance(spec.config, dict):
        spec = PolicySpec(spec.policy_class, spec.observation_space, spec.action_space,
                          {k: v for k, v in spec.config.items() if k not in MULTI_AGENT_SETUP_KEYS})
    state["policy_spec"] = describe(spec)
    return write_checkpoint(export_dir, state, cls=type(policy), metadata={"type": "Policy"})


def read_policy_checkpoint(path: str, *, trusted=None):
    manifest = read_manifest(path)
    if manifest.get("metadata", {}).get("type") != "Policy":
        raise CheckpointError(f"{path} is not a Policy checkpoint (written by policy.export_checkpoint(dir)).")
    state = read_state(path, manifest)
    where = Where.checkpoint(path) / "policy_spec"
    from relayrl.algorithms.config_json import OPTION_KINDS
    from relayrl.policy.policy import Policy

    # A policy's config is its algorithm's config dict: it may name what the algorithm's options name (callbacks,
    # exploration, ...).
    kinds = {"policy spec", "policy", *(kind for option_kinds in OPTION_KINDS.values() for kind in option_kinds)}
    trust = Trust(trusted).for_kinds(kinds)
    check = NameCheck()  # every name the trust refuses, in one error, before any is looked up
    check.described(state.get("policy_spec"), trust, where)
    check.raise_if_any(path)
    spec = rebuild(state.get("policy_spec"), trust, where)
    if not isinstance(spec, PolicySpec):
        raise where.error(f"expected a stored PolicySpec, found {type(spec).__name__}: the checkpoint is corrupt.")
    cls = spec.policy_class
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise CheckpointError(f"{path}: the stored policy class {cls!r} is not a Policy subclass.")
    if not isinstance(spec.config, (dict, type(None))):
        raise where.error(f"the stored policy config is a {type(spec.config).__name__}, not a dict: the checkpoint "
                          "is corrupt.")
    config = {k: v for k, v in (spec.config or {}).items() if not isinstance(v, Unstorable)}
    policy = cls(spec.observation_space, spec.action_space, config)
    state["policy_spec"] = spec
    try:
        policy.set_state(state)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError) as error:
        raise unexpected_error(Where.checkpoint(path), error) from None
    return policy
