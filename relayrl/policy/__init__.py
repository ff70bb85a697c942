"""The old API stack's Policy API (seed 001): Policy, the policy templates, SampleBatch, postprocessing.

Names load lazily (no torch until one that needs it is used). docs/policy_api.md says when to use it
rather than RLModule + Learner.
"""
import importlib

_NAMES = {
    "Policy": "relayrl.policy.policy",
    "PolicySpec": "relayrl.core.policy_spec",
    "TorchPolicy": "relayrl.policy.torch_policy",
    "TorchPolicyV2": "relayrl.policy.torch_policy_v2_subclassing",
    "EagerTFPolicy": "relayrl.policy.eager_tf_policy",  # needs TensorFlow (the tf extra)
    "SampleBatch": "relayrl.policy.sample_batch",
    "MultiAgentBatch": "relayrl.policy.sample_batch",
    "concat_samples": "relayrl.policy.sample_batch",
    "build_policy_class": "relayrl.policy.policy_template",
    "build_torch_policy": "relayrl.policy.policy_template",
    "build_tf_policy": "relayrl.policy.tf_policy_template",
    "compute_advantages": "relayrl.policy.postprocessing",
    "Postprocessing": "relayrl.policy.postprocessing",
}
__all__ = sorted(_NAMES)


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module 'relayrl.policy' has no attribute '{name}'")
    value = getattr(importlib.import_module(_NAMES[name]), name)
    globals()[name] = value
    return value
