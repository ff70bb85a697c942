"""`StochasticSampling`: sample from the module's distribution (RLlib's default for PPO, IMPALA, SAC)."""
from relayrl.exploration.exploration import Exploration, zeros_logp
from relayrl.exploration.random_actions import random_actions


class StochasticSampling(Exploration):
    """explore=True: a sample (uniformly random actions for the first `random_timesteps` steps);
    explore=False: the deterministic action (argmax / mean) with logp 0."""

    def __init__(self, action_space, *, random_timesteps: int = 0, **kwargs):
        super().__init__(action_space, **kwargs)
        if int(random_timesteps) != random_timesteps or random_timesteps < 0:
            raise ValueError(f"StochasticSampling: random_timesteps must be an int >= 0, got {random_timesteps!r}")
        self.random_timesteps = int(random_timesteps)

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        if timestep is not None:
            self.last_timestep = timestep
        batch_shape = action_distribution.inputs.shape[:-1]
        if not explore:
            actions = action_distribution.deterministic_sample()
            return actions, zeros_logp(actions, batch_shape)
        if timestep is not None and timestep < self.random_timesteps:
            return random_actions(self.action_space, batch_shape, self.normalize_actions,
                                  device=action_distribution.inputs.device)
        actions = action_distribution.sample()
        return actions, action_distribution.logp(actions)
