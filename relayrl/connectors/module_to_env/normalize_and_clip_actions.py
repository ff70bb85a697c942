"""Default module-to-env piece: map actions from the module's range to the env's Box bounds."""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


def unsquash_action(action, space: gym.spaces.Box):
    """[-1, 1] -> [low, high] (then clipped), for bounded dimensions; unbounded ones pass through."""
    if _all_bounded(space):  # the usual case, once per env step: the same arithmetic without the masks
        low, high = space.low, space.high
        scaled = low + (np.asarray(action) + 1.0) * (high - low) / 2.0
        return np.minimum(np.maximum(scaled, low), high).astype(space.dtype)
    bounded = np.isfinite(space.low) & np.isfinite(space.high)
    low, high = np.where(bounded, space.low, -1.0), np.where(bounded, space.high, 1.0)  # no inf arithmetic
    action = np.asarray(action)
    scaled = low + (action + 1.0) * (high - low) / 2.0
    return np.where(bounded, np.clip(scaled, low, high), action).astype(space.dtype)


def _all_bounded(space: gym.spaces.Box) -> bool:
    """Every dimension finite on both sides (gymnasium's Box keeps the masks; np.isfinite for anything else)."""
    below, above = getattr(space, "bounded_below", None), getattr(space, "bounded_above", None)
    if below is None or above is None:
        return bool(np.isfinite(space.low).all() and np.isfinite(space.high).all())
    return bool(below.all() and above.all())


def clip_action(action, space: gym.spaces.Box):
    return np.clip(action, space.low, space.high).astype(space.dtype)


class NormalizeAndClipActions(ConnectorV2):
    """Writes `actions_for_env`; the episode keeps the module's own `actions` (needed for log-probs)."""

    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *, normalize_actions: bool = True,
                 clip_actions: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.normalize_actions = normalize_actions
        self.clip_actions = clip_actions

    def skips(self, rl_module) -> bool:
        return not _has_box(self.input_action_space)  # only Box actions are rescaled

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        space = self.input_action_space
        if Columns.ACTIONS_FOR_ENV in batch or Columns.ACTIONS not in batch:
            return batch
        if isinstance(space, gym.spaces.Dict) and isinstance(batch[Columns.ACTIONS], dict):  # multi-agent, by agent
            if not (self.normalize_actions or self.clip_actions):
                return batch
            transform = unsquash_action if self.normalize_actions else clip_action
            batch[Columns.ACTIONS_FOR_ENV] = {
                key: [transform(a, space[key[1]]) if isinstance(space.spaces.get(key[1]), gym.spaces.Box) else a
                      for a in items] for key, items in batch[Columns.ACTIONS].items()}
            return batch
        if not isinstance(space, gym.spaces.Box) or not (self.normalize_actions or self.clip_actions):
            return batch
        transform = unsquash_action if self.normalize_actions else clip_action
        actions = batch[Columns.ACTIONS]
        if isinstance(actions, dict):
            batch[Columns.ACTIONS_FOR_ENV] = {k: [transform(a, space) for a in v] for k, v in actions.items()}
        else:
            batch[Columns.ACTIONS_FOR_ENV] = transform(actions, space)
        return batch


def _has_box(space) -> bool:
    if isinstance(space, gym.spaces.Dict):  # multi-agent: the agents' spaces
        return any(isinstance(sub, gym.spaces.Box) for sub in space.spaces.values())
    return isinstance(space, gym.spaces.Box)
