"""`Random`: uniformly random actions while exploring, the deterministic action otherwise."""
from relayrl.exploration.exploration import Exploration, zeros_logp
from relayrl.exploration.random_actions import random_actions


class Random(Exploration):
    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        batch_shape = action_distribution.inputs.shape[:-1]
        if timestep is not None:
            self.last_timestep = timestep
        if not explore:
            actions = action_distribution.deterministic_sample()
            return actions, zeros_logp(actions, batch_shape)
        return random_actions(self.action_space, batch_shape, self.normalize_actions,
                              device=action_distribution.inputs.device)
