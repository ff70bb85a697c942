"""Seed 001 "Policies in Multi-Agent": a hand-written policy next to a learned one on a MultiAgentEnv,
PolicySpec (top-level) in config.multi_agent(...) and the old `multiagent` dict, policies_to_train."""
import numpy as np
import torch

import relayrl
from relayrl.algorithms.algorithm import Algorithm
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.postprocessing import compute_advantages

TwoCartPoles = make_multi_agent("CartPole-v1")


def postprocess(policy, batch, other_agent_batches=None, episode=None):
    policy.seen_other_agents = getattr(policy, "seen_other_agents", set()) | set(other_agent_batches or {})
    return compute_advantages(batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


LearnedPolicy = build_policy_class("LearnedPolicy", "torch", loss_fn=loss, postprocess_fn=postprocess)


class AlwaysLeft(Policy):
    """A heuristic policy: no weights to learn (RLlib's rock-paper-scissors example pits such against learners)."""

    learn_calls = 0

    def compute_actions(self, obs_batch, state_batches=None, **kwargs):
        return np.zeros(len(obs_batch), np.int64), [], {}

    def learn_on_batch(self, samples):
        AlwaysLeft.learn_calls += 1
        return {}

    def get_weights(self):
        return {}

    def set_weights(self, weights):
        pass


class NoDefaultPolicy(Algorithm):
    pass


def _check(algo):
    learned = algo.get_policy("learned")
    before = learned.get_weights()
    AlwaysLeft.learn_calls = 0
    batch = algo.workers.sample()
    assert set(batch.policy_batches) == {"learned", "heuristic"}
    assert (batch["heuristic"]["actions"] == 0).all()
    assert batch.agent_steps() == batch["learned"].count + batch["heuristic"].count > batch.env_steps() == 100
    algo.train()
    assert AlwaysLeft.learn_calls == 0  # not in policies_to_train
    assert any(not np.array_equal(v, learned.get_weights()[k]) for k, v in before.items())
    assert learned.seen_other_agents == {1}  # the other agent's batch reached the postprocessor (at cuts)


def test_hand_written_policy_next_to_learned_one():
    config = (PolicyAlgorithmConfig(algo_class=NoDefaultPolicy).environment(TwoCartPoles, env_config={"num_agents": 2})
              .multi_agent(policies={"learned": relayrl.PolicySpec(policy_class=LearnedPolicy),
                                     "heuristic": relayrl.PolicySpec(policy_class=AlwaysLeft)},
                           policy_mapping_fn=lambda agent_id, episode, **kw: "learned" if agent_id == 0 else "heuristic",
                           policies_to_train=["learned"])
              .training(train_batch_size=100).debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        _check(algo)
    finally:
        algo.stop()


class LearnedByDefault(Algorithm):
    def get_default_policy_class(self, config):
        return LearnedPolicy


def test_old_multiagent_dict():
    """`{"multiagent": {...}}` with old 4-tuples; a spec without a class takes get_default_policy_class's."""
    algo = LearnedByDefault(config={
        "env": TwoCartPoles, "env_config": {"num_agents": 2}, "train_batch_size": 100, "seed": 0,
        "logger_config": {"type": "none"},
        "multiagent": {"policies": {"learned": (None, None, None, {}), "heuristic": (AlwaysLeft, None, None, {})},
                       "policy_mapping_fn": lambda agent_id, episode, **kw: "learned" if agent_id == 0 else "heuristic",
                       "policies_to_train": ["learned"]}})
    try:
        _check(algo)
    finally:
        algo.stop()


def test_multi_agent_evaluation_counts_whole_episodes():
    config = (PolicyAlgorithmConfig(algo_class=Algorithm).environment(TwoCartPoles, env_config={"num_agents": 2})
              .multi_agent(policies={"learned": relayrl.PolicySpec(policy_class=LearnedPolicy),
                                     "left": relayrl.PolicySpec(policy_class=AlwaysLeft)},
                           policy_mapping_fn=lambda agent_id, *args, **kwargs: "learned" if agent_id == 0 else "left")
              .training(train_batch_size=64)
              .evaluation(evaluation_interval=1, evaluation_duration=2, evaluation_config={"explore": False})
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        evaluation = algo.train()["evaluation"]["env_runners"]
        assert evaluation["num_episodes"] == 2 and evaluation["episode_return_mean"] > 0
    finally:
        algo.stop()
