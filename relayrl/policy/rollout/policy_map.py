"""Building a runner's policies from {policy_id: PolicySpec} and the algorithm's config."""
import copy
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from relayrl.core.policy_spec import PolicySpec
from relayrl.policy.models.catalog import MODEL_DEFAULTS
from relayrl.policy.policy_config_checks import PolicyConfig
from relayrl.policy.preprocessors import get_preprocessor


def policy_config(config, spec: PolicySpec) -> dict[str, Any]:
    """The policy's config dict: the algorithm's options (old key names), `model`, the `policy_config` option's
    keys (a policy's own settings, such as PPO's clip_param), then the spec's overrides. The policy_config keys
    are marked (`PolicyConfig.extra_keys`): a custom policy may take keys of its own there."""
    values = PolicyConfig(config.to_dict())
    extra = values.pop("policy_config", None) or {}
    values.update(extra)
    values.extra_keys = frozenset(extra)
    model = values.pop("model", None)
    if model is None:
        model = dict(values.get("model_config") or {})
    # as RLlib's config.model: the defaults under the user's keys, so `config["model"]["max_seq_len"]` works
    values["model"] = {**copy.deepcopy(MODEL_DEFAULTS), **(model or {})}
    values["in_evaluation"] = bool(getattr(config, "in_evaluation", False))
    values.update(spec.config or {})
    return values


def build_policy_map(specs: dict[str, PolicySpec], config, agent_spaces: dict[Any, tuple], *, seed: int | None,
                     mapping_fn: Callable, callbacks) -> tuple[dict[str, Any], dict[str, Any]]:
    """({policy_id: Policy}, {policy_id: its observations' Preprocessor or None}); a spec without spaces takes
    those of the first agent that maps to it. A policy is built for the preprocessed observation space
    (preprocessors.py: Discrete one-hot, Dict / Tuple flattened), as RLlib's old stack builds it."""
    if seed is not None:  # the same seed gives the same initial weights on every runner and the driver
        torch.manual_seed(int(config.seed))
        np.random.seed(int(seed))
        if "tensorflow" in sys.modules:  # a TF policy's class is defined, so TF is imported: seed it too
            sys.modules["tensorflow"].random.set_seed(int(seed))
    policy_map, preprocessors = {}, {}
    for pid, spec in specs.items():
        obs_space, act_space = spec.observation_space, spec.action_space
        if obs_space is None or act_space is None:
            agent = next((a for a in agent_spaces if mapping_fn(a) == pid), None)
            if agent is None:
                agent = next(iter(agent_spaces))
            obs_space = obs_space or agent_spaces[agent][0]
            act_space = act_space or agent_spaces[agent][1]
        if spec.policy_class is None:
            raise ValueError(f"policies[{pid!r}] has no policy_class and the algorithm has no "
                             "get_default_policy_class(config): give PolicySpec(policy_class=MyPolicy).")
        preprocessors[pid] = preprocessor = get_preprocessor(obs_space)
        if preprocessor is not None:
            obs_space = preprocessor.observation_space
        policy = spec.policy_class(obs_space, act_space, policy_config(config, spec))
        policy.callbacks = callbacks
        policy_map[pid] = policy
    return policy_map, preprocessors


def trainable_policy_ids(config, policy_map: dict[str, Any]) -> list[str]:
    """The policies the config's `policies_to_train` names (add_policy / remove_policy change the config)."""
    to_train = getattr(config, "policies_to_train", None)
    if to_train is None:
        return list(policy_map)
    if callable(to_train):
        return [pid for pid in policy_map if to_train(pid, None)]
    return [pid for pid in policy_map if pid in to_train]
