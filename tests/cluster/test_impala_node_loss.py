"""Seed 003's pre-emptible machines on one machine: a three-node Ray cluster (ray.cluster_utils.Cluster), a node
hosting an IMPALA EnvRunner is removed mid-run ("node marked dead"); only that runner's in-flight samples are
lost, it is recreated on the remaining nodes, and the run reaches its bar anyway."""
import pytest
import ray

from relayrl import IMPALAConfig


def _node_of(actor) -> str:
    return ray.get(actor.apply.remote(lambda runner: ray.get_runtime_context().get_node_id()))


@pytest.mark.slow
def test_node_removed_mid_run_and_the_run_reaches_its_bar(three_nodes):
    cluster, workers = three_nodes
    config = (IMPALAConfig().environment("CartPole-v1")
              .env_runners(num_env_runners=2, num_envs_per_env_runner=10, num_cpus_per_env_runner=1)
              .fault_tolerance(delay_between_env_runner_restarts_s=1.0, env_runner_health_probe_timeout_s=60)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        actors = algo.env_runner_group._actors
        removed, best, lost = None, 0.0, 0
        while True:
            result = algo.train()
            best = max(best, result["env_runners"]["episode_return_mean"])
            lost += result.get("num_env_steps_lost", 0)
            steps = result["num_env_steps_sampled_lifetime"]
            if removed is None and steps >= 50_000:
                node_id = _node_of(actors.actor(1))
                removed = next(w for w in workers if w.node_id == node_id)
                cluster.remove_node(removed)
            if best >= 200 or steps >= 1_000_000:
                break
        assert removed is not None and best >= 200, (best, steps)
        assert lost > 0 and result["num_remote_env_runner_restarts"] >= 1
        assert result["num_healthy_env_runners"] == 2
        assert removed.node_id not in {_node_of(actors.actor(i)) for i in actors.healthy_indices()}
    finally:
        algo.stop()
