"""PPO (RLlib's new API stack): config, default module, learner (loss) and algorithm (training_step).

Importing this package imports no torch; the classes load on first use. It also gives RLlib's old-stack PPO
policies by the names `ray.rllib.algorithms.ppo` exports them (`PPOTorchPolicy`, `PPOTF1Policy`,
`PPOTF2Policy`, and `PPOTFPolicy`); the TF ones need TensorFlow, so they stay out of `__all__` and
`from relayrl.algorithms.ppo import *` works without it.
"""
import importlib

from relayrl.algorithms.registry import lazy_exports

_algorithm_getattr, _algorithm_dir, _algorithm_all = lazy_exports("PPO")
_POLICIES = {"PPOTorchPolicy": "ppo_torch_policy", "PPOTFPolicy": "ppo_tf_policy", "PPOTF1Policy": "ppo_tf_policy",
             "PPOTF2Policy": "ppo_tf_policy"}
__all__ = sorted(_algorithm_all + ["PPOTorchPolicy"])


def __getattr__(name):
    if name in _POLICIES:
        return getattr(importlib.import_module(f"{__name__}.{_POLICIES[name]}"), name)
    return _algorithm_getattr(name)


def __dir__():
    return sorted(set(_algorithm_dir()) | set(_POLICIES))
