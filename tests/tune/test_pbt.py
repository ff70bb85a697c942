"""Population-based training over a relayrl algorithm with reused actors.

A PPO subclass records, in a JSON-lines file, every setup, reset_config, restore and result with a
hash of the learner's weights; the test then checks what PBT did from those records: exploits
happened, actors were reset in place (no rebuild), a clone got the donor's latest weights (not a
stale checkpoint), and the perturbed lr is the one in the optimiser afterwards.
"""
import hashlib
import json
import sys

import pytest

from relayrl import PPO

tune = pytest.importorskip("ray.tune")
ray_cloudpickle = pytest.importorskip("ray.cloudpickle")
# Trial actors cannot import this test module: ship its classes and functions by value.
ray_cloudpickle.register_pickle_by_value(sys.modules[__name__])

LRS = [1e-4, 2e-4, 3e-4, 4e-4, 5e-4]


def weights_hash(algo) -> str:
    digest = hashlib.sha256()
    for module_id, state in sorted(algo.learner_group.get_weights().items()):
        for name, value in sorted(state.items()):
            digest.update(f"{module_id}/{name}".encode())
            digest.update(value.tobytes())
    return digest.hexdigest()


class RecordingPPO(PPO):
    log_path = None  # set by the test before Tune ships the class

    def _record(self, event, **fields):
        learner = self.learner_group.foreach_learner(lambda learner: learner)[0]
        optimizer_lr = learner.get_optimizer("default_policy").param_groups[0]["lr"]
        record = {"event": event, "trial": self.trial_id, "iteration": self.iteration, "hash": weights_hash(self),
                  "lr": self.config.lr, "optimizer_lr": optimizer_lr, **fields}
        with open(self.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")

    def setup(self, config):
        super().setup(config)
        with open(self.log_path, "a") as f:
            f.write(json.dumps({"event": "setup"}) + "\n")

    def reset_config(self, new_config):
        accepted = super().reset_config(new_config)
        self._record("reset", accepted=accepted)
        return accepted

    def load_checkpoint(self, checkpoint):
        super().load_checkpoint(checkpoint)
        self._record("restore")

    def step(self):
        result = super().step()
        result["custom"] = {"score": self.config.lr * 1e4}  # a custom nested metric: higher lr scores higher
        self._record("result")
        return result


@pytest.mark.slow
def test_pbt_exploits_with_reused_actors(ray_session, tiny_ppo_config, tmp_path):
    log_path = tmp_path / "events.jsonl"
    RecordingPPO.log_path = str(log_path)
    scheduler = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.25,
        resample_probability=0.0, hyperparam_mutations={"lr": LRS}, synch=True)
    config = tiny_ppo_config.training(lr=tune.grid_search(LRS[:4]))
    results = tune.Tuner(
        RecordingPPO, param_space=config,
        tune_config=tune.TuneConfig(scheduler=scheduler, metric="custom/score", mode="max", reuse_actors=True),
        run_config=tune.RunConfig(storage_path=str(tmp_path / "results"), name="pbt", verbose=0,
                                  stop={"training_iteration": 4}),
    ).fit()
    assert results.num_errors == 0 and len(results) == 4
    events = [json.loads(line) for line in log_path.read_text().splitlines()]
    setups = [e for e in events if e["event"] == "setup"]
    resets = [e for e in events if e["event"] == "reset"]
    restores = [e for e in events if e["event"] == "restore"]

    assert restores, "PBT never restored a checkpoint"
    # Actors were reused through reset_config, which always succeeded: fewer actors built than trials
    # (2 CPUs run 2 trials at a time; Tune may still start a third actor while it caches one).
    assert resets and all(e["accepted"] for e in resets)
    assert len(setups) < 4 <= len(setups) + len(resets)

    exploits = 0
    for restore in restores:
        index = events.index(restore)
        latest = {}  # each trial's latest weights before this restore
        for e in events[:index]:
            if e["event"] == "result":
                latest[e["trial"]] = e
        # Not stale: the restored weights are a trial's latest weights at that moment -- the trial's own
        # (a paused trial resuming) or, for an exploit, another trial's.
        sources = [e for e in latest.values() if e["hash"] == restore["hash"]]
        assert sources, "restored weights match no trial's latest weights"
        source = sources[0]
        assert restore["iteration"] == source["iteration"]
        # Whatever was restored, the trial's own lr (perturbed after an exploit) is in force ...
        assert restore["optimizer_lr"] == pytest.approx(restore["lr"])
        later = [e for e in events[index:] if e["event"] == "result" and e["trial"] == restore["trial"]]
        assert later and all(e["optimizer_lr"] == pytest.approx(restore["lr"]) for e in later)
        if source["trial"] != restore["trial"]:
            exploits += 1
            # ... which for an exploit is the donor's lr perturbed, not the donor's.
            assert restore["lr"] != source["lr"] and restore["lr"] in LRS
    assert exploits >= 1, "PBT never cloned another trial"
    # A reused actor's new trial starts fresh (iteration 1), not where the actor's last trial ended.
    first_results = {}
    for e in events:
        if e["event"] in ("result", "restore"):
            first_results.setdefault(e["trial"], e)
    assert {e["event"] for e in first_results.values()} == {"result"}
    assert {e["iteration"] for e in first_results.values()} == {1}
    # Every result of every trial trained with the lr its config says.
    assert all(e["optimizer_lr"] == pytest.approx(e["lr"]) for e in events if e["event"] == "result")
