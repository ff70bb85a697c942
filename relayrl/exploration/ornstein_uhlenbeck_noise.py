"""`OrnsteinUhlenbeckNoise`: time-correlated noise on the deterministic Box action (DDPG's exploration)."""
import torch

from relayrl.exploration.gaussian_noise import GaussianNoise


class OrnsteinUhlenbeckNoise(GaussianNoise):
    """GaussianNoise whose noise follows an OU process per batch row (per sub-env):
    `x += -ou_theta * x + ou_sigma * N(0, 1)`; noise = scale(t) * ou_base_scale * x * (high - low)
    (high - low read as 1 on unbounded dims). A row's process restarts at 0 when its episode starts.
    """

    def __init__(self, action_space, *, ou_theta: float = 0.15, ou_sigma: float = 0.2, ou_base_scale: float = 0.1,
                 random_timesteps: int = 1000, initial_scale: float = 1.0, final_scale: float = 0.02,
                 scale_timesteps: int = 10000, scale_schedule=None, **kwargs):
        super().__init__(action_space, random_timesteps=random_timesteps, initial_scale=initial_scale,
                         final_scale=final_scale, scale_timesteps=scale_timesteps, scale_schedule=scale_schedule,
                         **kwargs)
        self.ou_theta, self.ou_sigma, self.ou_base_scale = float(ou_theta), float(ou_sigma), float(ou_base_scale)
        width = self.high - self.low
        self.width = torch.where(torch.isfinite(width), width, torch.ones_like(width))
        self.ou_state = None  # [batch..., action dims]; created for the first batch, reset if its shape changes

    def noise(self, deterministic: torch.Tensor) -> torch.Tensor:
        if self.ou_state is None or self.ou_state.shape != deterministic.shape:
            self.ou_state = torch.zeros_like(deterministic)
        self.ou_state += -self.ou_theta * self.ou_state + self.ou_sigma * torch.randn_like(self.ou_state)
        return self.scale() * self.ou_base_scale * self.ou_state * self.width.to(deterministic.device)

    def on_episode_start(self, policy=None, *, environment=None, episode=None, env_index=None, **kwargs):
        if self.ou_state is not None and env_index is not None and env_index < len(self.ou_state):
            self.ou_state[env_index] = 0.0

    def get_info(self):
        return {**super().get_info(), "ou_state_abs_mean": float(self.ou_state.abs().mean()) if self.ou_state
                is not None else 0.0}

    def get_state(self):
        state = super().get_state()
        state["ou_state"] = None if self.ou_state is None else self.ou_state.tolist()
        return state

    def set_state(self, state):
        super().set_state(state)
        if state.get("ou_state") is not None:
            self.ou_state = torch.tensor(state["ou_state"], dtype=torch.float32)
