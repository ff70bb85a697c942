"""Which numpy policy a runner acts with: the one that samples its module's acting distribution.

Conditions (numpy_actions.py's `runner_allows_numpy_policy`): numpy_inference on, no Exploration object,
GetActions first in module-to-env, the module declaring a numpy forward (`NumpyForwardAPI`), both acting
distributions the policy's class. Any other distribution (e.g. TorchSquashedGaussian, TorchDeterministic,
a custom one) keeps the torch path.
"""
from typing import Optional

from relayrl.env.sampling.numpy_actions import NumpyCategoricalPolicy, NumpyPolicy
from relayrl.env.sampling.numpy_gaussian_policies import NumpyDiagGaussianPolicy, NumpySquashedGaussianPolicy
from relayrl.modules.numpy_forward import NumpyForwardAPI

NUMPY_POLICIES = {policy.DISTRIBUTION: policy
                  for policy in (NumpyCategoricalPolicy, NumpyDiagGaussianPolicy, NumpySquashedGaussianPolicy)}


def numpy_policy_for(runner) -> Optional[NumpyPolicy]:
    """The numpy policy for `runner` now, or None where the torch module must act."""
    module = runner.module
    if not isinstance(module, NumpyForwardAPI):
        return None
    policy = NUMPY_POLICIES.get(module.get_exploration_action_dist_cls())
    return None if policy is None else policy.for_runner(runner)
