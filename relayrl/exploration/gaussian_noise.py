"""`GaussianNoise`: the deterministic Box action plus annealed Gaussian noise (TD3's exploration)."""
import gymnasium as gym
import torch

from relayrl.core.schedules import Scheduler
from relayrl.exploration.epsilon_greedy import piecewise_schedule
from relayrl.exploration.exploration import Exploration, zeros_logp
from relayrl.exploration.random_actions import random_actions


class GaussianNoise(Exploration):
    """Uniformly random actions for `random_timesteps`, then `det_action + scale(t) * N(0, stddev)`,
    clipped to the module's action bounds ([-1, 1] on bounded dims when normalize_actions).

    scale(t) anneals linearly from initial_scale to final_scale over `scale_timesteps` after the
    random phase (or follows `scale_schedule`, [(t, value), ...]). explore=False: no noise.
    """

    def __init__(self, action_space, *, random_timesteps: int = 1000, stddev: float = 0.1,
                 initial_scale: float = 1.0, final_scale: float = 0.02, scale_timesteps: int = 10000,
                 scale_schedule=None, **kwargs):
        super().__init__(action_space, **kwargs)
        if not isinstance(action_space, gym.spaces.Box):
            raise TypeError(f"{type(self).__name__} needs a Box action space, got {action_space}; use "
                            "EpsilonGreedy or StochasticSampling for discrete actions.")
        if random_timesteps < 0 or scale_timesteps < 1 or stddev < 0:
            raise ValueError(f"{type(self).__name__}: random_timesteps must be >= 0, scale_timesteps >= 1 and "
                             f"stddev >= 0, got {random_timesteps!r}, {scale_timesteps!r}, {stddev!r}")
        self.random_timesteps = int(random_timesteps)
        self.stddev = float(stddev)
        if scale_schedule is not None:
            self.scale_schedule = Scheduler(scale_schedule)
        else:
            self.scale_schedule = piecewise_schedule([
                (0, initial_scale), (random_timesteps, initial_scale),
                (random_timesteps + scale_timesteps, final_scale)])
        self.low, self.high = self.action_bounds()

    def scale(self, timestep=None) -> float:
        return self.scale_schedule.get(self.last_timestep if timestep is None else timestep)

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        deterministic = action_distribution.deterministic_sample()
        batch_shape = deterministic.shape[:-1]
        if not explore:
            return deterministic, zeros_logp(deterministic, batch_shape)
        if timestep is not None:
            self.last_timestep = timestep
        if self.last_timestep < self.random_timesteps:
            actions, _ = random_actions(self.action_space, batch_shape, self.normalize_actions,
                                        device=deterministic.device)
        else:
            actions = deterministic + self.noise(deterministic)
        low, high = self.low.to(actions.device), self.high.to(actions.device)
        return torch.maximum(torch.minimum(actions, high), low), zeros_logp(actions, batch_shape)

    def noise(self, deterministic: torch.Tensor) -> torch.Tensor:
        return self.scale() * self.stddev * torch.randn_like(deterministic)

    def get_info(self):
        return {"cur_scale": self.scale()}
