"""Action masking for PPO's default module: observations `{"action_mask": ..., "observations": ...}`, where the
mask has a 1 for each allowed action and a 0 for each forbidden one (RLlib's example layout and class name)."""
import gymnasium as gym
import numpy as np
import torch

from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import Columns

FLOAT_MIN = torch.finfo(torch.float32).min  # a forbidden action's logit: probability 0, and no inf or NaN
MASK_KEY, OBS_KEY = "action_mask", "observations"


class ActionMaskingTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default module (MLP, CNN or LSTM) that acts and trains on `obs["observations"]` and gives every action
    `obs["action_mask"]` forbids a logit of float32's minimum: it is never sampled, never the greedy action, and
    the loss sees its probability as 0.

    Needs Discrete actions and a Dict observation space with those two keys (the mask a Box of shape (n,)).
    `observation_space` is the whole Dict, as the env gives it; the layers are built for "observations".
    """

    def __init__(self, *, observation_space=None, action_space=None, **kwargs):
        _check_spaces(observation_space, action_space)
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS_KEY], action_space=action_space, **kwargs)
        self.observation_space = observation_space

    def _forward(self, batch, **kwargs):
        mask, batch = _split(batch)
        return _masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch, **kwargs):
        mask, batch = _split(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        if isinstance(batch[Columns.OBS], dict):
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


def _check_spaces(observation_space, action_space) -> None:
    layout = ('gymnasium.spaces.Dict({"action_mask": Box(0.0, 1.0, (num_actions,)), "observations": <the '
              'observation space>})')
    if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {MASK_KEY, OBS_KEY}:
        raise ValueError(f"ActionMaskingTorchRLModule needs observations {layout}, got {observation_space}.")
    if not isinstance(action_space, gym.spaces.Discrete):
        raise ValueError(f"ActionMaskingTorchRLModule masks Discrete actions, got {action_space}.")
    mask_shape = getattr(observation_space[MASK_KEY], "shape", None)
    if mask_shape != (int(action_space.n),):
        raise ValueError(f"ActionMaskingTorchRLModule: the action mask has shape {mask_shape}, but there are "
                         f"{int(action_space.n)} actions; it needs one 0/1 entry per action: {layout}.")


def _split(batch):
    """(the mask, the batch with the bare observations)."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or MASK_KEY not in obs:
        raise ValueError(f"ActionMaskingTorchRLModule got observations without an {MASK_KEY!r} entry "
                         f"({type(obs).__name__}); keep the env's Dict observations (no FlattenObservations "
                         "before this module).")
    return obs[MASK_KEY], {**batch, Columns.OBS: obs[OBS_KEY]}


def _masked(out, mask):
    mask = torch.as_tensor(np.asarray(mask)) if not isinstance(mask, torch.Tensor) else mask
    logits = out[Columns.ACTION_DIST_INPUTS]
    out[Columns.ACTION_DIST_INPUTS] = logits + torch.clamp(torch.log(mask.to(logits.dtype)), min=FLOAT_MIN)
    return out
