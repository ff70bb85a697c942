"""Learning tests' loops: train until the mean return reaches a target or the env-step budget runs out; train once."""
from typing import Tuple


def train_until(config, target: float, budget: int) -> Tuple[float, int]:
    """Build the algorithm from `config`, train it until `episode_return_mean >= target` or `budget` env steps
    are sampled, stop it; returns (last mean return, env steps sampled)."""
    algo = config.build_algo()
    try:
        while True:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            if ret >= target or steps >= budget:
                return ret, steps
    finally:
        algo.stop()


def train_once(config) -> dict:
    """Build the algorithm from `config`, run one train() call, stop it; returns the result."""
    algo = config.build_algo()
    try:
        return algo.train()
    finally:
        algo.stop()
