"""Seed 003's cluster of pre-emptible machines on one machine: a three-node Ray cluster (ray.cluster_utils.Cluster)."""
import pytest


@pytest.fixture
def three_nodes(request):
    """(cluster, [worker node, worker node]): a head with no CPUs, so the work goes to the two workers, each with
    `request.param` CPUs (2 unless the test parametrizes the fixture indirectly). The test module is pickled by
    value, so functions defined in it (callbacks) reach the actors."""
    import ray
    from ray.cluster_utils import Cluster

    ray.cloudpickle.register_pickle_by_value(request.module)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [cluster.add_node(num_cpus=getattr(request, "param", 2)) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    yield cluster, workers
    ray.shutdown()
    cluster.shutdown()
