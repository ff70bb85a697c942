"""`TargetNetworkAPI`: RLlib's mixin for modules with slow-moving target copies (DQN, SAC).

A module implements three methods; the Learner does the rest:

- `make_target_networks()` builds the target copies (called once by the Learner, never on the
  inference-only EnvRunner modules, which do not need them);
- `get_target_network_pairs()` returns `[(main_net, target_net), ...]`;
- `forward_target(batch)` runs the target networks (e.g. DQN: `{"qf_preds": Q_target(batch["obs"])}`).

`update_target_networks(module, tau)` moves every target towards its main net:
`target = tau * main + (1 - tau) * target` (tau=1.0: hard copy).
"""
import copy
from typing import Any, Dict, List, Tuple

import torch
from torch import nn

TARGET_NETWORK_PREFIX = "_target_"
# The key of forward_target()'s output for modules whose target is a policy (APPO's loss reads it).
TARGET_NETWORK_ACTION_DIST_INPUTS = "target_network_action_dist_inputs"


class TargetNetworkAPI:
    """Mixin: the module keeps target copies of some of its networks."""

    def make_target_networks(self) -> None:
        raise NotImplementedError

    def get_target_network_pairs(self) -> List[Tuple[nn.Module, nn.Module]]:
        raise NotImplementedError

    def forward_target(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        raise NotImplementedError


def make_target_network(main: nn.Module) -> nn.Module:
    """A frozen copy of `main` (no gradients; the optimizers never see it)."""
    target = copy.deepcopy(main)
    for param in target.parameters():
        param.requires_grad_(False)
    return target


def make_target_networks(multi_module) -> None:
    """`make_target_networks()` on every sub-module with the TargetNetworkAPI (what Learners call in build())."""
    for module_id in multi_module.keys():
        module = multi_module[module_id]
        if isinstance(module, TargetNetworkAPI):
            module.make_target_networks()


@torch.no_grad()
def update_target_networks(module: TargetNetworkAPI, tau: float) -> None:
    """Polyak-average every (main, target) pair of `module`; tau=1.0 copies the main weights."""
    pairs = module.get_target_network_pairs()
    cached = module.__dict__.get("_target_update_lists")
    if cached is None or len(cached[0]) != len(pairs) or any(
            a is not c or b is not d for (a, b), (c, d) in zip(pairs, cached[0])):
        # Walking the networks' parameters every update costs more than a small net's lerp: kept per module
        # while the (main, target) pairs are the same objects.
        mains, targets, buffers = [], [], []
        for main, target in pairs:
            mains.extend(main.parameters())
            targets.extend(target.parameters())
            buffers.extend(zip(main.buffers(), target.buffers()))
        cached = module.__dict__["_target_update_lists"] = (list(pairs), mains, targets, buffers)
    _, mains, targets, buffers = cached
    for main_buffer, target_buffer in buffers:  # buffers (e.g. batch-norm statistics) are copied, as RLlib does
        target_buffer.copy_(main_buffer)
    if not targets:
        return
    if tau >= 1.0:
        torch._foreach_copy_(targets, mains)
    else:  # one fused kernel per dtype instead of a Python loop over the tensors
        torch._foreach_lerp_(targets, mains, tau)


def is_target_key(state_key: str) -> bool:
    """True for state-dict keys of target networks (attributes named `_target_*`)."""
    return state_key.startswith(TARGET_NETWORK_PREFIX)


__all__ = ["TargetNetworkAPI", "make_target_network", "make_target_networks", "update_target_networks", "is_target_key",
           "TARGET_NETWORK_PREFIX"]
