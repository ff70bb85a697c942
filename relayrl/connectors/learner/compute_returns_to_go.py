"""Learner piece: the discounted return from each step to the end of its episode chunk (`returns_to_go`), as
REINFORCE-style losses use it in place of advantages."""
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns
from relayrl.ops.gae import discount_cumsum


class ComputeReturnsToGo(ConnectorV2):
    """Writes `returns_to_go` (float32, one item per step of each episode) into the train batch.

    The sum stops at the chunk's end without bootstrapping, so sample whole episodes
    (`batch_mode="complete_episodes"` or `sample(num_episodes=...)`) for unbiased returns.
    """

    WRITES_EPISODES = False
    CONFIG_OPTIONS = ("gamma",)  # reset_config pushes a new gamma into the piece

    def __init__(self, input_observation_space=None, input_action_space=None, *, gamma: float, **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.gamma = gamma

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            n = len(episode)
            returns = discount_cumsum(episode.get_rewards(slice(0, n)), self.gamma)
            self.add_n_batch_items(batch, Columns.RETURNS_TO_GO, returns, n, episode)
        return batch
