"""The feature matrix's `async_vector` cells (feature_matrix.py): 2 sub-envs per runner in gymnasium's
AsyncVectorEnv (worker processes) train, or the option is refused when the algorithm is built."""
import gymnasium as gym
import pytest

import feature_matrix as fm
from matrix_checks import refused

PAIRS = [(a, e) for a in fm.ALGORITHMS for e in fm.ENV_KINDS]


def _vector_env(algo_obj):
    runner = getattr(algo_obj, "env_runner", None)
    if runner is None:  # the Policy API: its local worker
        runner = algo_obj.workers.local_worker()
    return getattr(runner, "env", None)


@pytest.mark.parametrize("algo, env_kind", PAIRS)
def test_async_vector(algo, env_kind):
    config = fm.make_config(algo, env_kind, async_vector=True)
    if refused(algo, env_kind, "async_vector", config.build_algo):
        return
    algo_obj = config.build_algo()
    try:
        assert isinstance(_vector_env(algo_obj), gym.vector.AsyncVectorEnv)  # the option is honoured, not ignored
        algo_obj.train()
        assert algo_obj.train()["num_env_steps_sampled_lifetime"] > 0
    finally:
        algo_obj.stop()
