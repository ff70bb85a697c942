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
    With `multi_agent=True` (RLlib's flag) each agent's frames stack in its own space.
    """

    BATCHED_SAFE = False  # adds per-episode items to `obs`
    WRITES_EPISODES = False

    def __init__(self, input_observation_space=None, input_action_space=None, *, num_frames: int = 1,
                 multi_agent: bool = False, as_learner_connector: bool = False, **kwargs):
        if int(num_frames) < 1:
            raise ValueError(f"FrameStacking num_frames must be >= 1, got {num_frames}.")
        self.num_frames = int(num_frames)
        self._as_learner_connector = as_learner_connector
        self._multi_agent = multi_agent
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        if not self._multi_agent:
            return self._stacked_space(input_observation_space)
        if not isinstance(input_observation_space, gym.spaces.Dict):
            return input_observation_space  # the agents' spaces are not known yet
        # (each agent's frames stack in its own space; the episodes are per agent already)
        return gym.spaces.Dict({aid: self._stacked_space(space)
                                for aid, space in input_observation_space.spaces.items()})

    def _stacked_space(self, space):
        if self._as_learner_connector and not isinstance(space, gym.spaces.Box):
            # The Learner's pipeline starts from the env's own spaces, which the env-to-module pieces (e.g.
            # FlattenObservations of a Discrete observation) changed before the episodes stored them.
            return space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) == 0:
            raise ValueError(f"FrameStacking needs a Box observation space with at least one axis, got {space}.")
        reps = (1,) * (len(space.shape) - 1) + (self.num_frames,)
        return gym.spaces.Box(np.tile(space.low, reps), np.tile(space.high, reps), dtype=space.dtype)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        n = self.num_frames
        if self._as_learner_connector:
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
                length = len(episode)
                # Observations t-n+1 .. length-1 (lookback included), zero-filled before the first one stored.
                frames = _left_zero_fill(
                    episode.get_observations(slice(-(n - 1), length), neg_index_as_lookback=True), n - 1 + length,
                    like=episode.get_observations(-1),
                )
                # Row t: frames t .. t+n-1 (= obs[t-n+1] .. obs[t]), concatenated on the last axis.
                stacked = np.concatenate([frames[i:i + length] for i in range(n)], axis=-1)
                self.add_n_batch_items(batch, Columns.OBS, stacked, length, episode)
            return batch
        for episode in self.single_agent_episode_iterator(episodes):
            # The newest n observations (into the lookback of cut chunks), zero-filled at the episode start.
            frames = _left_zero_fill(episode.get_observations(slice(-n, None)), n, like=None)
            self.add_batch_item(batch, Columns.OBS, np.concatenate(list(frames), axis=-1), episode)
        return batch


class FrameStackingEnvToModule(FrameStacking):
    """RLlib's env-to-module name: `FrameStacking` with as_learner_connector=False."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, num_frames: int = 1,
                 multi_agent: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, num_frames=num_frames,
                         multi_agent=multi_agent, as_learner_connector=False, **kwargs)


class FrameStackingLearner(FrameStacking):
    """RLlib's Learner-side name: `FrameStacking` with as_learner_connector=True."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, num_frames: int = 1,
                 multi_agent: bool = False, **kwargs):
        super().__init__(input_observation_space, input_action_space, num_frames=num_frames,
                         multi_agent=multi_agent, as_learner_connector=True, **kwargs)


def _left_zero_fill(observations, total: int, like=None) -> np.ndarray:
    """Stack `observations` (list or array) and prepend zero frames until there are `total` rows.

    The zeros take the observations' own shape and dtype (not the episode's space, which may
    predate pieces such as FlattenObservations that changed the observations); `like` is an
    observation to take them from when `observations` is empty.
    """
    frames = np.asarray(observations)
    if len(frames) == 0:
        if like is None:
            raise ValueError("FrameStacking found an episode without observations; call add_env_reset() first.")
        frames = np.zeros((0,) + np.shape(like), np.asarray(like).dtype)
    if frames.ndim < 2:
        raise ValueError(f"FrameStacking needs observations with at least one axis, got shape {frames.shape[1:]}.")
    missing = total - len(frames)
    if missing > 0:
        frames = np.concatenate([np.zeros((missing,) + frames.shape[1:], frames.dtype), frames], axis=0)
    return frames
