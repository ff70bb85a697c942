"""Build an EnvRunner's Exploration object from its config, and decide whether sampling needs it."""
from typing import Callable, Optional, Tuple

from relayrl.exploration.exploration import Exploration
from relayrl.exploration.make_exploration import make_exploration
from relayrl.exploration.stochastic_sampling import StochasticSampling


def build_env_runner_exploration(config, action_space, *, model=None, worker_index: int = 0,
                                 num_workers: int = 0) -> Tuple[Exploration, bool, Optional[Callable]]:
    """(exploration, used_by_get_actions, on_episode_start hook or None).

    Plain StochasticSampling without random steps is what GetActions does on its own fast path,
    so the runner leaves it out of the sampling loop (no per-step cost for the default).
    """
    default = config.get_default_exploration_config() if hasattr(config, "get_default_exploration_config") else None
    exploration = make_exploration(getattr(config, "exploration_config", None), action_space, default=default,
                                   framework="torch", policy_config=config, model=model,
                                   num_workers=num_workers or 0, worker_index=worker_index)
    plain_default = type(exploration) is StochasticSampling and exploration.random_timesteps == 0
    overrides_start = type(exploration).on_episode_start is not Exploration.on_episode_start
    return exploration, not plain_default, exploration.on_episode_start if overrides_start else None
