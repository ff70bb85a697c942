"""`PrevActionsPrevRewards`: the newest observation becomes a dict with the previous n actions and rewards."""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2


class PrevActionsPrevRewards(ConnectorV2):
    """Rewrites each episode's newest observation as `{"_orig_obs": obs, "prev_n_actions": ...,
    "prev_n_rewards": ...}` (RLlib's keys and order), where the actions before it are flattened and concatenated
    (Discrete and MultiDiscrete one-hot, Box as floats) and missing ones (the episode's start) are zeros.

    An env-to-module piece: the rewritten observation stays in the episode, so the Learner trains on the same
    inputs. Follow it with `FlattenObservations()` unless the module takes dict observations. With
    `multi_agent=True` the spaces are dicts by agent id and every agent gets its own previous actions and rewards.
    `n_prev_actions=0` or `n_prev_rewards=0` leaves that key out.
    """

    ORIG_OBS_KEY = "_orig_obs"
    PREV_ACTIONS_KEY = "prev_n_actions"
    PREV_REWARDS_KEY = "prev_n_rewards"

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 n_prev_actions: int = 1, n_prev_rewards: int = 1, **kwargs):
        for name, value in (("n_prev_actions", n_prev_actions), ("n_prev_rewards", n_prev_rewards)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
                raise ValueError(f"PrevActionsPrevRewards({name}={value!r}): give a whole number >= 0.")
        self._multi_agent = multi_agent
        self.n_prev_actions = int(n_prev_actions)
        self.n_prev_rewards = int(n_prev_rewards)
        super().__init__(input_observation_space, input_action_space, multi_agent=multi_agent,
                         n_prev_actions=n_prev_actions, n_prev_rewards=n_prev_rewards, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        if input_observation_space is None or input_action_space is None:
            return input_observation_space
        if not self._multi_agent:
            return self._augmented_space(input_observation_space, input_action_space)
        if not isinstance(input_observation_space, gym.spaces.Dict):
            return input_observation_space  # agents' spaces not known yet
        return gym.spaces.Dict({aid: self._augmented_space(space, input_action_space[aid])
                                for aid, space in input_observation_space.spaces.items()})

    def _augmented_space(self, obs_space, action_space) -> gym.spaces.Dict:
        spaces = {self.ORIG_OBS_KEY: obs_space}
        if self.n_prev_actions:
            if not isinstance(action_space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.Box)):
                raise ValueError(f"PrevActionsPrevRewards: previous actions of a {type(action_space).__name__} "
                                 "action space are not supported (Discrete, MultiDiscrete or Box); pass "
                                 "n_prev_actions=0 to add only the previous rewards.")
            flat = gym.spaces.flatten_space(action_space)  # Discrete: one-hot, in [0, 1]
            spaces[self.PREV_ACTIONS_KEY] = gym.spaces.Box(np.tile(flat.low, self.n_prev_actions).astype(np.float32),
                                                           np.tile(flat.high, self.n_prev_actions).astype(np.float32),
                                                           dtype=np.float32)
        if self.n_prev_rewards:
            spaces[self.PREV_REWARDS_KEY] = gym.spaces.Box(-np.inf, np.inf, (self.n_prev_rewards,), np.float32)
        return gym.spaces.Dict(spaces)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes):
            space = self.observation_space[episode.agent_id] if self._multi_agent else self.observation_space
            augmented = {self.ORIG_OBS_KEY: episode.get_observations(-1)}
            if self.n_prev_actions:
                actions = episode.get_actions(slice(-self.n_prev_actions, None), fill=0.0, one_hot_discrete=True)
                augmented[self.PREV_ACTIONS_KEY] = np.concatenate(
                    [np.asarray(a, np.float32).reshape(-1) for a in actions])
            if self.n_prev_rewards:
                augmented[self.PREV_REWARDS_KEY] = np.asarray(
                    episode.get_rewards(slice(-self.n_prev_rewards, None), fill=0.0), np.float32)
            episode.set_observations(new_data=augmented, at_indices=-1)
            # Later pieces' `get_observations(..., fill=...)` must fill in the dict space, not the raw one.
            if episode.observation_space is not space:
                episode.observation_space = space
        return batch
