"""`FrameStacking`: the last `num_frames` observations concatenated on the last axis, for both sides."""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class FrameStacking(ConnectorV2):
    """Stacks in the batch only; episodes keep single frames (no duplicated data is stored or sent).

    Use it twice: in the env-to-module pipeline (`FrameStacking(num_frames=N)`) and in the Learner
    pipeline (`FrameStacking(num_frames=N, as_learner_connector=True)`). Frames before the episode
    start are zeros. With `batch_mode="truncate_episodes"`, set
    `config.env_runners(episode_lookback_horizon=N - 1)` so cut chunks keep their earlier frames.
    """

    def __init__(self, input_observation_space=None, input_action_space=None, *, num_frames: int = 1,
                 multi_agent: bool = False, as_learner_connector: bool = False, **kwargs):
        if int(num_frames) < 1:
            raise ValueError(f"FrameStacking num_frames must be >= 1, got {num_frames}.")
        self.num_frames = int(num_frames)
        self._as_learner_connector = as_learner_connector
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        space = input_observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) == 0:
            raise ValueError(f"FrameStacking needs a Box observation space with at least one axis, got {space}.")
        reps = (1,) * (len(space.shape) - 1) + (self.num_frames,)
        return gym.spaces.Box(np.tile(space.low, reps), np.tile(space.high, reps), dtype=space.dtype)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        n = self.num_frames
        if self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
                length = len(episode)
                frames = np.asarray(episode.get_observations(slice(-(n - 1), length), neg_index_as_lookback=True,
                                                             fill=0.0)) if n > 1 else \
                    np.asarray(episode.get_observations(slice(0, length)))
                windows = np.lib.stride_tricks.sliding_window_view(frames, n, axis=0)  # (L, ..., n)
                stacked = np.concatenate([windows[..., i] for i in range(n)], axis=-1)
                self.add_n_batch_items(batch, Columns.OBS, stacked, length, episode)
            return batch
        for episode in self.single_agent_episode_iterator(episodes):
            frames = episode.get_observations(slice(-n, None), fill=0.0)
            self.add_batch_item(batch, Columns.OBS, np.concatenate(list(frames), axis=-1), episode)
        return batch
