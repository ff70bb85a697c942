"""`PolicyAlgorithmConfig`: the config of an Algorithm whose `get_default_policy_class` gives a Policy.

The base options plus the old stack's keys that policies read from their config dict (`model`, `lambda`,
`use_gae`, ...), and the old `multiagent` dict key. Unknown keys still raise (with a did-you-mean); a policy
with settings of its own takes them from PolicySpec(config={...}) or the `policy_config` dict option.
"""
from collections.abc import Mapping
from typing import Any

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import BOOL, DICT, FRACTION, Check, LegacyKey, Option
from relayrl.policy.models.catalog import MODEL_DEFAULTS


def _multiagent(value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise ValueError(f"`multiagent` must be a dict with policies / policy_mapping_fn / policies_to_train, "
                         f"got {value!r}")
    known = ("policies", "policy_mapping_fn", "policies_to_train", "count_steps_by")
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise ValueError(f"multiagent: unknown keys {unknown}; known: {list(known)}")
    return dict(value)


_ANY = Check("any value", lambda v: True, Any)


class PolicyAlgorithmConfig(AlgorithmConfig):
    SUPPORTS_MULTI_AGENT = True  # MultiAgentEnvs run with MultiAgentPolicyRunner (rollout/)
    APPLIES_POLICY_SPEC_CONFIG = True  # each Policy gets its PolicySpec's config (rollout/policy_map.py)

    _OPTIONS = (
        Option("model", dict(MODEL_DEFAULTS), "The old stack's model dict (fcnet_hiddens, fcnet_activation, "
               "vf_share_layers, custom_model, custom_model_config, ...), given to the policy's config['model'].",
               "training", DICT, cli=False),
        Option("lambda_", 1.0, "GAE lambda (config['lambda'] in the policy).", "training", FRACTION, key="lambda",
               mutable=True),
        Option("use_gae", True, "Postprocessors that support it compute GAE advantages.", "training", BOOL),
        Option("use_critic", True, "Postprocessors that support it use the value function.", "training", BOOL),
        Option("simple_optimizer", True, "Old stack: train with train_one_step (relayrl has no multi-GPU "
               "loader; multi_gpu_train_one_step is the same).", "training", BOOL),
        Option("lr_schedule", None, "Old stack: [[timestep, lr], ...] for LearningRateSchedule mixins.",
               "training", _ANY, cli=False),
        Option("eager_tracing", False, "TF policies only: trace the eager functions (tf.function).", "framework",
               BOOL),
        Option("policy_config", {}, "Extra keys every policy's config dict gets (a custom policy's own settings).",
               "training", DICT, cli=False),
    )
    # A Policy picks its framework by its class (build_tf_policy / build_torch_policy); "tf2" / "tf" here are
    # what RLlib's get_default_policy_class(config) reads to choose one ("tf" runs eagerly too: no TF1 graphs).
    _OPTION_CHANGES = {"framework_str": {"check": Check(
        "'torch', 'tf2' or 'tf' (Policy-based algorithms; 'tf' runs as 'tf2', eagerly)",
        lambda v: v in ("torch", "tf2", "tf"), str)}}
    _LEGACY_KEYS = (
        LegacyKey("multiagent", "its keys are config.multi_agent(policies=..., policy_mapping_fn=..., "
                                "policies_to_train=...).", _multiagent),
    )
