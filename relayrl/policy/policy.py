"""`Policy`: the old API stack's unit that acts and learns (RLlib's `policy/policy.py`).

Subclass it and implement `compute_actions` (and `learn_on_batch`, `get_weights` / `set_weights` for a policy
that learns), or build one from functions with `build_policy_class` (policy_template.py). Policies run inside
an Algorithm whose `get_default_policy_class(config)` returns one (policy_algorithm.py).
"""
from typing import Any

import gymnasium as gym
import numpy as np

from relayrl.core.policy_spec import PolicySpec
from relayrl.policy.sample_batch import SampleBatch

CHECKPOINT_FORMAT_VERSION = 1
_STATE_FILE = "policy_state.json"
_ARRAYS_FILE = "policy_arrays.npz"


class Policy:
    """Acts (`compute_actions`), rewrites trajectories (`postprocess_trajectory`) and learns (`learn_on_batch`)."""

    _checkpoint_kind = "policy"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    def __init__(self, observation_space: gym.Space, action_space: gym.Space, config: dict):
        self.observation_space = observation_space
        self.action_space = action_space
        self.observation_space_struct = getattr(observation_space, "original_space", observation_space)
        self.action_space_struct = getattr(action_space, "original_space", action_space)
        self.config = dict(config or {})
        self.framework = self.config.get("framework", "torch")
        self.global_timestep = 0
        self.num_grad_updates = 0
        self.model = None
        self.dist_class = None
        self.exploration = None
        self.view_requirements = {}
        self.callbacks = None  # set by the runner/algorithm: old-stack hooks (on_learn_on_batch, ...)

    # -- acting ------------------------------------------------------------------------------------------
    def compute_actions(self, obs_batch, state_batches=None, prev_action_batch=None, prev_reward_batch=None,
                        info_batch=None, episodes=None, explore=None, timestep=None, **kwargs):
        """(actions [B, ...], state_outs: list of [B, ...], extra fetches: {column: [B, ...]})."""
        raise NotImplementedError(f"{type(self).__name__} must implement compute_actions(obs_batch, state_batches, "
                                  "...) -> (actions, state_outs, extra_fetches).")

    def compute_actions_from_input_dict(self, input_dict, explore=None, timestep=None, episodes=None, **kwargs):
        """compute_actions() on an input dict's `obs`, `state_in_*`, `prev_actions`, `prev_rewards`, `infos`."""
        state_batches = [input_dict[k] for k in _numbered(input_dict, "state_in_")]
        return self.compute_actions(
            input_dict[SampleBatch.OBS], state_batches, prev_action_batch=input_dict.get(SampleBatch.PREV_ACTIONS),
            prev_reward_batch=input_dict.get(SampleBatch.PREV_REWARDS), info_batch=input_dict.get(SampleBatch.INFOS),
            episodes=episodes, explore=explore, timestep=timestep, **kwargs)

    def compute_single_action(self, obs=None, state=None, *, prev_action=None, prev_reward=None, info=None,
                              input_dict=None, episode=None, explore=None, timestep=None, **kwargs) -> tuple:
        """One observation in, (action, state_outs, extra fetches) out: compute_actions on a batch of one."""
        if input_dict is None:
            if obs is None:
                raise ValueError("compute_single_action() needs obs=... (or input_dict=...).")
            input_dict = {SampleBatch.OBS: _batch_of_one(obs)}
            for i, s in enumerate(state or []):
                input_dict[f"state_in_{i}"] = _batch_of_one(s)
            if prev_action is not None:
                input_dict[SampleBatch.PREV_ACTIONS] = _batch_of_one(prev_action)
            if prev_reward is not None:
                input_dict[SampleBatch.PREV_REWARDS] = _batch_of_one(prev_reward)
            if info is not None:
                input_dict[SampleBatch.INFOS] = [info]
        else:
            input_dict = {k: (v if k == SampleBatch.INFOS else _batch_of_one(v)) for k, v in input_dict.items()}
        episodes = [episode] if episode is not None else None
        actions, state_out, extra = self.compute_actions_from_input_dict(
            input_dict, explore=explore, timestep=timestep, episodes=episodes, **kwargs)
        return (_first(actions), [_first(s) for s in state_out],
                {k: _first(v) for k, v in (extra or {}).items()})

    def compute_log_likelihoods(self, actions, obs_batch, state_batches=None, prev_action_batch=None,
                                prev_reward_batch=None, actions_normalized=True, in_training=True):
        raise NotImplementedError(f"{type(self).__name__} does not implement compute_log_likelihoods().")

    # -- trajectories and learning ----------------------------------------------------------------------
    def postprocess_trajectory(self, sample_batch: SampleBatch, other_agent_batches=None, episode=None):
        """One trajectory (one agent, one episode or a cut piece of one) before it joins a train batch."""
        return sample_batch

    def loss(self, model, dist_class, train_batch):
        raise NotImplementedError(f"{type(self).__name__} does not implement loss().")

    def learn_on_batch(self, samples: SampleBatch) -> dict[str, Any]:
        """One update from a train batch; returns stats. Default: apply_gradients(compute_gradients(samples))."""
        grads, info = self.compute_gradients(samples)
        self.apply_gradients(grads)
        return info

    def compute_gradients(self, postprocessed_batch):
        raise NotImplementedError(f"{type(self).__name__} implements neither learn_on_batch() nor "
                                  "compute_gradients(): it cannot learn (policies_to_train should leave it out).")

    def apply_gradients(self, gradients) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement apply_gradients().")

    def on_global_var_update(self, global_vars: dict[str, Any]) -> None:
        self.global_timestep = int(global_vars.get("timestep", self.global_timestep))

    # -- recurrent state --------------------------------------------------------------------------------
    def get_initial_state(self) -> list:
        return []

    def is_recurrent(self) -> bool:
        return len(self.get_initial_state()) > 0

    def num_state_tensors(self) -> int:
        return len(self.get_initial_state())

    # -- weights, state, checkpoints --------------------------------------------------------------------
    def get_weights(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_weights().")

    def set_weights(self, weights) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement set_weights().")

    def get_exploration_state(self) -> dict:
        return {}

    def get_state(self) -> dict[str, Any]:
        """weights, global_timestep, num_grad_updates and the policy_spec (class, spaces, config)."""
        try:
            weights = self.get_weights()
        except NotImplementedError:
            weights = None
        return {"weights": weights, "global_timestep": self.global_timestep,
                "num_grad_updates": self.num_grad_updates,
                "policy_spec": PolicySpec(type(self), self.observation_space, self.action_space, self.config)}

    def set_state(self, state: dict[str, Any]) -> None:
        if state.get("weights") is not None:
            self.set_weights(state["weights"])
        self.global_timestep = int(state.get("global_timestep", self.global_timestep))
        self.num_grad_updates = int(state.get("num_grad_updates", self.num_grad_updates))

    def export_checkpoint(self, export_dir: str, filename_prefix=None, *, policy_state=None,
                          checkpoint_format: str = "json") -> None:
        """Write the policy's state as data: arrays in an .npz (no pickles), the rest as JSON."""
        from relayrl.policy.policy_checkpoint import write_policy_checkpoint

        write_policy_checkpoint(self, export_dir, policy_state or self.get_state())

    @staticmethod
    def from_checkpoint(checkpoint: str, policy_ids=None, *, trusted=None) -> "Policy":
        """The Policy a `export_checkpoint` folder holds (its class: one of relayrl's, or yours in `trusted`)."""
        from relayrl.policy.policy_checkpoint import read_policy_checkpoint

        return read_policy_checkpoint(checkpoint, trusted=trusted)

    @staticmethod
    def from_state(state: dict[str, Any]) -> "Policy":
        spec = state["policy_spec"]
        policy = spec.policy_class(spec.observation_space, spec.action_space, spec.config)
        policy.set_state(state)
        return policy

    def apply(self, func, *args, **kwargs):
        return func(self, *args, **kwargs)

    def get_host(self) -> str:
        import platform

        return platform.node()


def _numbered(mapping, prefix: str) -> list[str]:
    keys = [k for k in mapping.keys() if isinstance(k, str) and k.startswith(prefix) and k[len(prefix):].isdigit()]
    return sorted(keys, key=lambda k: int(k[len(prefix):]))


def _batch_of_one(value):
    if isinstance(value, dict):
        return {k: _batch_of_one(v) for k, v in value.items()}
    return np.asarray(value)[None]


def _first(value):
    if isinstance(value, dict):
        return {k: _first(v) for k, v in value.items()}
    return value[0]


__all__ = ["Policy", "PolicySpec"]
