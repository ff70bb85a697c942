"""The config keys of RLlib's old-stack PPO policies (PPOTorchPolicy, PPOTFPolicy), their defaults and checks.

Framework-free: both policies take `ppo_policy_defaults` as the template's `get_default_config` and call
`validate_ppo_policy_config` in `before_init`, so a bad value fails before a model is built. The defaults are
RLlib's old-stack `PPOConfig` values for the keys the policy reads; an algorithm's own options (its `lr`,
`lambda`, `grad_clip`, ...) and a PolicySpec's or `policy_config`'s keys go on top.
"""
from typing import Any

PPO_POLICY_DEFAULTS = {
    "lr": 5e-5,
    "lr_schedule": None,
    "lambda": 1.0,
    "use_gae": True,
    "use_critic": True,
    "use_kl_loss": True,
    "kl_coeff": 0.2,
    "kl_target": 0.01,
    "clip_param": 0.3,
    "vf_clip_param": 10.0,
    "vf_loss_coeff": 1.0,
    "entropy_coeff": 0.0,
    "entropy_coeff_schedule": None,
    "grad_clip": None,
}


def ppo_policy_defaults() -> dict[str, Any]:
    return dict(PPO_POLICY_DEFAULTS)


# key -> (check, what it must be)
_CHECKS = {
    "clip_param": (lambda v: v > 0, "> 0 (the ratio is clipped to [1 - clip_param, 1 + clip_param])"),
    "vf_clip_param": (lambda v: v > 0, "> 0 (the squared value error is clipped to [0, vf_clip_param])"),
    "kl_target": (lambda v: v > 0, "> 0"),
    "kl_coeff": (lambda v: v >= 0, ">= 0"),
    "vf_loss_coeff": (lambda v: v >= 0, ">= 0"),
    "entropy_coeff": (lambda v: v >= 0, ">= 0 (RLlib's PPO refuses a negative one too)"),
    "lambda": (lambda v: 0 <= v <= 1, "in [0, 1]"),
}


def validate_ppo_policy_config(policy, observation_space, action_space, config: dict) -> None:
    """The template's before_init: a ValueError naming the key for a value PPO cannot train with."""
    name = type(policy).__name__
    for key, (ok, rule) in _CHECKS.items():
        value = config.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not ok(value):
            raise ValueError(f"{name}: config[{key!r}] = {value!r}; it must be a number {rule}.")
    if config.get("use_gae") and not config.get("use_critic"):
        raise ValueError(f"{name}: use_gae=True needs use_critic=True (GAE needs the value function's predictions).")


__all__ = ["PPO_POLICY_DEFAULTS", "ppo_policy_defaults", "validate_ppo_policy_config"]
