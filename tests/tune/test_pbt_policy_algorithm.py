"""Population-based training over a Policy-based Algorithm (seed 001's API) with reused actors: PBT's lr
mutations reach the policies' optimizers through reset_config, and exploits restore whole checkpoints."""
import json
import sys

import pytest
import torch

from relayrl.algorithms.algorithm import Algorithm
from relayrl.policy.policy_template import build_policy_class

tune = pytest.importorskip("ray.tune")
ray_cloudpickle = pytest.importorskip("ray.cloudpickle")
ray_cloudpickle.register_pickle_by_value(sys.modules[__name__])  # trial actors cannot import this module

LRS = [1e-4, 2e-4, 3e-4, 4e-4, 5e-4]


def loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["rewards"])


PG = build_policy_class("PG", "torch", loss_fn=loss)


class RecordingPolicyAlgo(Algorithm):
    log_path = None  # set by the test before Tune ships the class

    def get_default_policy_class(self, config):
        return PG

    def _record(self, event, **fields):
        policy = self.get_policy()
        record = {"event": event, "trial": self.trial_id, "lr": self.config.lr,
                  "optimizer_lr": policy._optimizers[0].param_groups[0]["lr"], "policy_lr": policy.config["lr"],
                  **fields}
        with open(self.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")

    def reset_config(self, new_config):
        accepted = super().reset_config(new_config)
        self._record("reset", accepted=accepted)
        return accepted

    def load_checkpoint(self, checkpoint):
        super().load_checkpoint(checkpoint)
        self._record("restore")

    def step(self):
        result = super().step()
        result["custom"] = {"score": self.config.lr * 1e4}
        self._record("result")
        return result


@pytest.mark.slow
def test_pbt_mutates_the_policies_lr_with_reused_actors(ray_session, tmp_path):
    log_path = tmp_path / "events.jsonl"
    RecordingPolicyAlgo.log_path = str(log_path)
    scheduler = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.25,
        resample_probability=0.0, hyperparam_mutations={"lr": LRS}, synch=True)
    param_space = {"env": "CartPole-v1", "train_batch_size": 32, "seed": 0, "lr": tune.grid_search(LRS[:4])}
    results = tune.Tuner(
        RecordingPolicyAlgo, param_space=param_space,
        tune_config=tune.TuneConfig(scheduler=scheduler, metric="custom/score", mode="max", reuse_actors=True),
        run_config=tune.RunConfig(storage_path=str(tmp_path / "results"), name="pbt", verbose=0,
                                  stop={"training_iteration": 4}),
    ).fit()
    assert results.num_errors == 0 and len(results) == 4
    events = [json.loads(line) for line in log_path.read_text().splitlines()]
    resets = [e for e in events if e["event"] == "reset"]
    assert any(e["event"] == "restore" for e in events), "PBT never restored a checkpoint"
    assert resets and all(e["accepted"] for e in resets)
    # every result trained with the lr its config says, in the policy's config and its optimizer
    assert all(e["optimizer_lr"] == pytest.approx(e["lr"]) == pytest.approx(e["policy_lr"])
               for e in events if e["event"] in ("result", "restore"))
    assert len({e["lr"] for e in events if e["event"] == "result"}) >= 3
