"""RLlib's exploration API: `config.env_runners(exploration_config={"type": "EpsilonGreedy", ...})`."""
from relayrl.exploration.epsilon_greedy import EpsilonGreedy
from relayrl.exploration.exploration import Exploration
from relayrl.exploration.gaussian_noise import GaussianNoise
from relayrl.exploration.make_exploration import make_exploration
from relayrl.exploration.ornstein_uhlenbeck_noise import OrnsteinUhlenbeckNoise
from relayrl.exploration.random_exploration import Random
from relayrl.exploration.soft_q import SoftQ
from relayrl.exploration.stochastic_sampling import StochasticSampling

__all__ = ["Exploration", "StochasticSampling", "EpsilonGreedy", "SoftQ", "GaussianNoise", "OrnsteinUhlenbeckNoise",
           "Random", "make_exploration"]
