"""Policies inside an Algorithm: old dicts, classmethod get_default_policy_class, callbacks (trajectory rewriting,
on_learn_on_batch, the old episode signatures), one learn_on_batch per iteration, checkpoints."""
import numpy as np
import pytest
import torch

from relayrl.algorithms.algorithm import Algorithm
from relayrl.callbacks import RLlibCallback
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.postprocessing import compute_advantages


def loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


def postprocess(policy, batch, other_agent_batches=None, episode=None):
    return compute_advantages(batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


PG = build_policy_class("PG", "torch", loss_fn=loss, postprocess_fn=postprocess)


class ClassMethodAlgo(Algorithm):  # the anchor's spelling: a classmethod
    @classmethod
    def get_default_policy_class(cls, config):
        return PG


class OldStyleCallbacks(RLlibCallback):
    events = []

    def on_episode_start(self, *, worker, base_env, policies, episode, env_index, **kwargs):
        OldStyleCallbacks.events.append(("start", type(policies["default_policy"]).__name__, env_index))

    def on_episode_end(self, *, worker, base_env, policies, episode, env_index, **kwargs):
        episode.custom_metrics["len"] = episode.length

    def on_postprocess_trajectory(self, *, worker, episode, agent_id, policy_id, policies, postprocessed_batch,
                                  original_batches, **kwargs):
        postprocessed_batch["advantages"] *= 0.0  # rewrite before learning
        postprocessed_batch["marker"] = np.ones(postprocessed_batch.count)
        assert original_batches[agent_id][2].count == postprocessed_batch.count

    def on_learn_on_batch(self, *, policy, train_batch, result, **kwargs):
        result["saw_marker"] = bool((train_batch["marker"] == 1).all())
        result["max_advantage"] = float(np.abs(train_batch["advantages"]).max())


def test_old_dict_callbacks_and_one_update_per_iteration():
    OldStyleCallbacks.events = []
    algo = ClassMethodAlgo(config={"env": "CartPole-v1", "num_envs_per_worker": 2, "train_batch_size": 64,
                                   "callbacks": OldStyleCallbacks, "seed": 0, "logger_config": {"type": "none"}})
    try:
        policy = algo.get_policy()
        before = policy.get_weights()
        result = algo.train()
        assert policy.num_grad_updates == 1 and result["num_env_steps_sampled_lifetime"] >= 64
        # advantages were zeroed by the callback: the loss is 0, the weights stay
        assert all(np.array_equal(v, policy.get_weights()[k]) for k, v in before.items())
        learn = policy.learn_on_batch(algo.workers.sample())
        assert learn["saw_marker"] and learn["max_advantage"] == 0.0
        assert OldStyleCallbacks.events[:2] == [("start", "PG", 0), ("start", "PG", 1)]
        for _ in range(3):
            result = algo.train()
        assert "len_mean" in result["env_runners"]["custom_metrics"]
    finally:
        algo.stop()


def test_unknown_old_key_names_a_fix():
    with pytest.raises((ValueError, KeyError), match="did you mean|num_workerz"):
        ClassMethodAlgo(config={"env": "CartPole-v1", "num_workerz": 2})


def test_save_and_restore(tmp_path):
    config = PolicyAlgorithmConfig(algo_class=ClassMethodAlgo).environment("CartPole-v1").training(
        train_batch_size=64).debugging(seed=0, logger_config={"type": "none"})
    algo = config.build_algo()
    try:
        algo.train()
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        saved = algo.get_policy().get_weights()
        algo.train()
        algo.restore_from_path(path)
        assert all(np.array_equal(v, algo.get_policy().get_weights()[k]) for k, v in saved.items())
    finally:
        algo.stop()
