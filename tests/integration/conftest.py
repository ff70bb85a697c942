"""A local Ray for the matrix's remote-runner and Tune cells (3 logical CPUs: a Tune trial and its 2 remote
runners); the matrix's own functions (connector factories) and the PG example's classes travel to the actors by
value (they cannot import this folder)."""
import sys

import pytest


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    import feature_matrix

    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=3, include_dashboard=False, log_to_driver=False)  # the trial + 2 runners
    feature_matrix.make_config("PG", "gym_id")  # imports the example module
    for module in (feature_matrix, sys.modules["examples.policy_gradient_custom_policy"]):
        ray.cloudpickle.register_pickle_by_value(module)
    yield ray
    ray.shutdown()
