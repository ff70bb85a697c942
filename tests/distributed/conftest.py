"""Ray for the tests in this folder: one small local instance per test module (2 CPUs, no dashboard)."""
import sys

import pytest
import ray


@pytest.fixture(scope="module", autouse=True)
def ray_cluster(request):
    # Test modules are imported by file name, which Ray's workers cannot import: ship their
    # functions and classes (callbacks, lambdas) by value instead.
    ray.cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
