"""`EpsilonGreedy`: a uniformly random action with probability epsilon, else the argmax of the Q-values."""
import gymnasium as gym
import numpy as np
import torch

from relayrl.core.schedules import Scheduler
from relayrl.exploration.exploration import Exploration


def piecewise_schedule(points) -> Scheduler:
    """A Scheduler through `points` [(t, v), ...], dropping points that repeat the previous timestep."""
    kept = []
    for t, v in points:
        if kept and t <= kept[-1][0]:
            continue
        kept.append((t, v))
    return Scheduler(kept)


class EpsilonGreedy(Exploration):
    """Discrete actions; `action_distribution.inputs` are Q-values (or logits): acts on their argmax.

    Epsilon is held at initial_epsilon for `warmup_timesteps`, then annealed linearly to final_epsilon
    over `epsilon_timesteps` (held after), unless `epsilon_schedule` ([(t, value), ...] or a float)
    gives the schedule. Actions whose Q-value is -inf (masked) are never picked at random.
    """

    def __init__(self, action_space, *, initial_epsilon: float = 1.0, final_epsilon: float = 0.05,
                 warmup_timesteps: int = 0, epsilon_timesteps: int = int(1e5), epsilon_schedule=None, **kwargs):
        super().__init__(action_space, **kwargs)
        if not isinstance(action_space, gym.spaces.Discrete):
            raise TypeError(f"EpsilonGreedy needs a Discrete action space, got {action_space}; use "
                            "GaussianNoise or StochasticSampling for Box actions.")
        for name, value in (("initial_epsilon", initial_epsilon), ("final_epsilon", final_epsilon)):
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"EpsilonGreedy: {name} must be in [0, 1], got {value!r}")
        if warmup_timesteps < 0 or epsilon_timesteps < 1:
            raise ValueError("EpsilonGreedy: warmup_timesteps must be >= 0 and epsilon_timesteps >= 1, got "
                             f"{warmup_timesteps!r} and {epsilon_timesteps!r}")
        if epsilon_schedule is not None:
            self.epsilon_schedule = Scheduler(epsilon_schedule)
        else:
            self.epsilon_schedule = piecewise_schedule([
                (0, initial_epsilon), (warmup_timesteps, initial_epsilon),
                (warmup_timesteps + epsilon_timesteps, final_epsilon)])
        self.n = int(action_space.n)
        # Own generator, seeded from torch's: runs seeded with torch.manual_seed (config.seed) repeat.
        self._rng = np.random.default_rng(int(torch.randint(2**62, ()).item()))

    def epsilon(self, timestep) -> float:
        return self.epsilon_schedule.get(self.last_timestep if timestep is None else timestep)

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        # numpy: for the few rows of a vector-env step, a handful of numpy calls cost far less than torch kernels.
        q_values = action_distribution.inputs
        q = q_values.detach().cpu().numpy()
        greedy = q.argmax(-1)
        if not explore:
            return _tensor(greedy, q_values), torch.zeros(greedy.shape, device=q_values.device)
        if timestep is not None:
            self.last_timestep = timestep
        epsilon = self.epsilon(timestep)
        if q.min() > _MASKED:
            random, n_valid = self._rng.integers(self.n, size=greedy.shape), self.n
        else:  # -inf (masked) actions are never explored: argmax of uniform noise over the valid ones
            valid = q > _MASKED
            random = np.where(valid, self._rng.random(q.shape), -1.0).argmax(-1)
            n_valid = np.maximum(valid.sum(-1), 1)
        actions = np.where(self._rng.random(greedy.shape) < epsilon, random, greedy)
        # Behaviour log-prob: eps / n_valid for any action, plus (1 - eps) for the greedy one.
        logp = np.log(epsilon / n_valid + (1.0 - epsilon) * (actions == greedy))
        return _tensor(actions, q_values), _tensor(logp.astype(np.float32), q_values)

    def get_info(self):
        return {"cur_epsilon": self.epsilon(None)}

    def get_state(self):
        return {**super().get_state(), "cur_epsilon": self.epsilon(None), "rng": self._rng.bit_generator.state}

    def set_state(self, state):
        super().set_state(state)
        if state.get("rng") is not None:
            self._rng.bit_generator.state = state["rng"]

    def check_state(self, state, where):
        from relayrl.checkpoints.state_checks import check_generator_state

        super().check_state(state, where)
        if state.get("rng") is not None:
            check_generator_state(state["rng"], where / "rng")


_MASKED = -3.0e38  # Q-values at or below this (float32's lowest, -inf) mark masked actions


def _tensor(array: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    tensor = torch.from_numpy(np.asarray(array))
    return tensor if like.device.type == "cpu" else tensor.to(like.device)
