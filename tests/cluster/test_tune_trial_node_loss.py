"""Seed 003's Tune run on pre-emptible machines, on one machine: a three-node Ray cluster
(ray.cluster_utils.Cluster), the node hosting an IMPALA trial is removed mid-run ("node marked dead"), and Tune
restarts the trial on the remaining node from its last checkpoint (FailureConfig), where it finishes."""
import json
import threading
import time

import pytest
import ray

from relayrl import IMPALA, IMPALAConfig

tune = pytest.importorskip("ray.tune")

ITERATIONS = 8


def _record_node(path):
    """An on_train_result callback: each iteration appends {node, iteration} to `path` (the test reads it to find
    the trial's node), then waits a little so the node can be removed mid-run."""
    def on_train_result(*, algorithm, result, **kwargs):
        with open(path, "a") as f:
            f.write(json.dumps({"node": ray.get_runtime_context().get_node_id(),
                                "iteration": result["training_iteration"]}) + "\n")
        time.sleep(0.5)
    return on_train_result


def _lines(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


@pytest.mark.slow
@pytest.mark.parametrize("three_nodes", [1], indirect=True)  # one CPU per worker node: room for the one trial
def test_trial_whose_node_is_removed_resumes_from_its_last_checkpoint_on_another_node(three_nodes, tmp_path):
    cluster, workers = three_nodes
    log = str(tmp_path / "iterations.jsonl")
    config = (IMPALAConfig().environment("CartPole-v1")
              .env_runners(num_envs_per_env_runner=4)
              .callbacks(on_train_result=_record_node(log))
              .debugging(seed=0, logger_config={"type": "none"}))
    tuner = tune.Tuner(IMPALA, param_space=config, run_config=tune.RunConfig(
        storage_path=str(tmp_path / "results"), name="node_loss", verbose=0,
        stop={"training_iteration": ITERATIONS},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1),
        failure_config=tune.FailureConfig(max_failures=2)))
    outcome = {}
    fit = threading.Thread(target=lambda: outcome.update(results=tuner.fit()))
    fit.start()

    deadline = time.time() + 300
    while time.time() < deadline and not any(line["iteration"] >= 3 for line in _lines(log)):
        time.sleep(0.2)
    before = _lines(log)
    assert before and before[-1]["iteration"] >= 3, before  # the trial ran (and checkpointed) a few iterations
    removed = next(w for w in workers if w.node_id == before[-1]["node"])
    cluster.remove_node(removed)
    fit.join(timeout=600)
    assert not fit.is_alive()

    result = outcome["results"][0]
    assert result.error is None
    metrics = result.metrics
    assert metrics["training_iteration"] == ITERATIONS
    # Restored from a checkpoint, not started over: fewer iterations since the restore than in all.
    assert 0 < metrics["iterations_since_restore"] < ITERATIONS
    after = _lines(log)[len(before):]
    assert after and all(line["node"] != removed.node_id for line in after[-(metrics["iterations_since_restore"]):])
    assert after[-1]["iteration"] == ITERATIONS
