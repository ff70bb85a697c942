"""`Exploration`: how (and whether) an EnvRunner turns the module's action distribution into actions.

RLlib's exploration API: the EnvRunner builds one object from `config.env_runners(exploration_config=
{"type": ..., **kwargs})`; the `GetActions` module-to-env piece calls `get_exploration_action` with
the distribution built from the module's `action_dist_inputs`. Subclass it and override that method.
"""
from typing import Any, Dict, Optional, Tuple

import torch


def config_value(policy_config: Any, name: str, default: Any) -> Any:
    """`name` from an AlgorithmConfig or a plain dict (or `default` when neither has it)."""
    if policy_config is None:
        return default
    if isinstance(policy_config, dict):
        return policy_config.get(name, default)
    return getattr(policy_config, name, default)


class Exploration:
    """Base class; `cls(action_space, *, framework, policy_config, model, num_workers, worker_index, **kwargs)`.

    `action_space` is the module's action space. With `normalize_actions` (the default) a Box
    module acts in [-1, 1] on its bounded dimensions; `action_bounds()` gives these bounds.
    """

    _checkpoint_kind = "exploration"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    def __init__(self, action_space, *, framework: str = "torch", policy_config: Any = None, model: Any = None,
                 num_workers: int = 0, worker_index: int = 0):
        if framework not in ("torch", None):
            raise ValueError(f"{type(self).__name__}: relayrl only runs torch, got framework={framework!r}")
        self.action_space = action_space
        self.framework = "torch"
        self.policy_config = policy_config
        self.model = model
        self.num_workers = num_workers
        self.worker_index = worker_index
        self.last_timestep = 0

    # -- the main hook ---------------------------------------------------------------------------
    def get_exploration_action(self, *, action_distribution, timestep: int,
                               explore: bool = True) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Return (actions, logp) for the batch; `action_distribution.inputs` holds the module's outputs.

        explore=False must give the deterministic action (no noise). logp may be None (read as zeros).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement get_exploration_action().")

    # -- optional hooks --------------------------------------------------------------------------
    def before_compute_actions(self, *, timestep: Optional[int] = None, explore: Optional[bool] = None,
                               **kwargs) -> None:
        """Called before each forward pass that computes actions."""

    def on_episode_start(self, policy=None, *, environment=None, episode=None, env_index=None, **kwargs) -> None:
        """Called when an EnvRunner starts an episode in sub-env `env_index` (only when overridden)."""

    def on_episode_end(self, policy=None, *, environment=None, episode=None, **kwargs) -> None:
        """Kept for RLlib compatibility; EnvRunners do not call it."""

    def postprocess_trajectory(self, policy, sample_batch, tf_sess=None):
        return sample_batch

    def get_exploration_optimizer(self, optimizers):
        return optimizers

    # -- info and state (plain data, for metrics and checkpoints) --------------------------------
    def get_info(self) -> Dict[str, Any]:
        """Current exploration values, e.g. {"cur_epsilon": 0.3}."""
        return {}

    def get_state(self) -> Dict[str, Any]:
        return {"last_timestep": int(self.last_timestep)}

    def set_state(self, state: Dict[str, Any]) -> None:
        self.last_timestep = int(state.get("last_timestep", self.last_timestep))

    def check_state(self, state: Dict[str, Any], where) -> None:
        """The stored state has this object's keys, kinds and array shapes (CheckpointError naming `where`)."""
        from relayrl.checkpoints.state_checks import check_like

        check_like(self.get_state(), state, where, type(self).__name__)

    # -- helpers for subclasses ------------------------------------------------------------------
    @property
    def normalize_actions(self) -> bool:
        return bool(config_value(self.policy_config, "normalize_actions", True))

    def action_bounds(self):
        """(low, high) of the module's Box actions: [-1, 1] on bounded dims when normalize_actions."""
        from relayrl.exploration.random_actions import module_action_bounds

        return module_action_bounds(self.action_space, self.normalize_actions)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_info()})"


def make_action_distribution(dist_cls, inputs):
    """`dist_cls.from_logits(inputs)` with the raw inputs kept as `.inputs` (Q-values, logits, means)."""
    distribution = dist_cls.from_logits(inputs)
    distribution.inputs = inputs
    return distribution


def zeros_logp(actions: torch.Tensor, batch_shape) -> torch.Tensor:
    return torch.zeros(tuple(batch_shape), device=actions.device)
