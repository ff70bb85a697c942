"""`SoftQ`: sample from softmax(Q / temperature) (Boltzmann exploration)."""
import gymnasium as gym

from relayrl.exploration.exploration import zeros_logp
from relayrl.exploration.stochastic_sampling import StochasticSampling
from relayrl.modules.distributions import TorchCategorical


class SoftQ(StochasticSampling):
    """Discrete actions; explore=False takes the argmax of the Q-values."""

    def __init__(self, action_space, *, temperature: float = 1.0, **kwargs):
        super().__init__(action_space, **kwargs)
        if not isinstance(action_space, gym.spaces.Discrete):
            raise TypeError(f"SoftQ needs a Discrete action space, got {action_space}.")
        if not float(temperature) > 0:
            raise ValueError(f"SoftQ: temperature must be > 0, got {temperature!r}")
        self.temperature = float(temperature)

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        q_values = action_distribution.inputs
        if not explore:
            actions = q_values.argmax(-1)
            return actions, zeros_logp(actions, q_values.shape[:-1])
        distribution = TorchCategorical(q_values / self.temperature)
        distribution.inputs = q_values / self.temperature
        return super().get_exploration_action(action_distribution=distribution, timestep=timestep, explore=True)

    def get_info(self):
        return {"temperature": self.temperature}
