"""`add_policy` / `remove_policy` on the old-stack Policy API mixed with what a league run uses with them: the
config as the one record of the policies (what `algo.config` and checkpoints see), evaluation runners, a remote
runner that Ray restarts, and a checkpoint restored in a new process by a user's script with its own Policy."""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from relayrl.algorithms.algorithm import Algorithm
from relayrl.core.policy_spec import PolicySpec
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig

sys.path.insert(0, os.path.dirname(__file__))
from test_policy_feature_mixes import PGPolicyV2  # noqa: E402  (RLlib's TorchPolicyV2 subclassing form)

TwoCartPoles = make_multi_agent("CartPole-v1")


class PolePointer(Policy):
    """A fixed heuristic: push the cart the way the pole leans."""

    def compute_actions(self, obs_batch, state_batches=None, **kwargs):
        return (np.asarray(obs_batch)[:, 2] > 0).astype(np.int64), [], {}

    def get_weights(self):
        return {}

    def set_weights(self, weights):
        pass


class BrokenPolicy(Policy):
    def __init__(self, observation_space, action_space, config):
        raise RuntimeError("this policy cannot be built")


def learner_and_heuristic(agent_id, episode=None, **kwargs):
    return "learner" if agent_id == 0 else "heuristic"


def learner_and_past_self(agent_id, episode=None, **kwargs):
    return "learner" if agent_id == 0 else "past_self"


def learner_only(agent_id, episode=None, **kwargs):
    return "learner"


def _config(**evaluation):
    return (PolicyAlgorithmConfig(algo_class=Algorithm).environment(TwoCartPoles, env_config={"num_agents": 2})
            .multi_agent(policies={"learner": PolicySpec(policy_class=PGPolicyV2),
                                   "heuristic": PolicySpec(policy_class=PolePointer)},
                         policy_mapping_fn=learner_and_heuristic, policies_to_train=["learner"])
            .training(train_batch_size=100, lr=0.01).evaluation(**evaluation)
            .debugging(seed=0, logger_config={"type": "none"}))


def _same_weights(a, b):
    return set(a) == set(b) and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def _runner_view(runner):
    """What a runner knows of the policies: their ids, the trainable ones, agent 1's policy."""
    return sorted(runner.policy_map), runner.policies_to_train(), runner._map(1)


# -- gap 1: the config records the added policy ----------------------------------------------------------------

def test_add_policy_updates_algo_config_and_a_failed_add_changes_nothing():
    algo = _config().build_algo()
    try:
        before = algo.config
        with pytest.raises(RuntimeError, match="cannot be built"):
            algo.add_policy("broken", policy_cls=BrokenPolicy, policy_mapping_fn=learner_only)
        with pytest.raises(RuntimeError, match="state_dict"):  # a state that does not fit the new policy
            algo.add_policy("misfit", policy_cls=PGPolicyV2, policy_state={"weights": {"x": np.zeros(3)}},
                            policy_mapping_fn=learner_only)
        assert algo.config is before and sorted(algo.config.policies) == ["heuristic", "learner"]
        assert _runner_view(algo.workers.local_worker()) == (["heuristic", "learner"], ["learner"], "heuristic")

        algo.add_policy("past_self", policy=algo.get_policy("learner"), policy_mapping_fn=learner_and_past_self,
                        policies_to_train=["learner", "past_self"])
        config = algo.config
        assert sorted(config.policies) == ["heuristic", "learner", "past_self"]
        assert config.policies["past_self"].policy_class is PGPolicyV2
        assert config.policy_mapping_fn is learner_and_past_self
        assert list(config.policies_to_train) == ["learner", "past_self"]
        assert before.policies.keys() == {"learner", "heuristic"}  # the old config object is not changed
        with pytest.raises(Exception):
            config.training(lr=0.5)  # frozen, as the built algorithm's config is
        assert _runner_view(algo.workers.local_worker()) == (["heuristic", "learner", "past_self"],
                                                             ["learner", "past_self"], "past_self")
        assert set(algo.workers.sample().policy_batches) == {"learner", "past_self"}
    finally:
        algo.stop()


# -- gap 3: remove_policy (RLlib's old-stack signature) --------------------------------------------------------

def test_remove_policy_with_evaluation_runners_and_refusals_that_change_nothing():
    algo = _config(evaluation_interval=1, evaluation_duration=2).build_algo()
    try:
        algo.add_policy("past_self", policy_cls=PGPolicyV2, policy_state=algo.get_policy("learner").get_state(),
                        policy_mapping_fn=learner_and_past_self)
        evaluation = algo.eval_env_runner_group.local_worker()
        assert _runner_view(evaluation) == (["heuristic", "learner", "past_self"], ["learner"], "past_self")
        algo.train()  # samples and evaluates with past_self
        config = algo.config
        with pytest.raises(ValueError, match="no such policy"):
            algo.remove_policy("nobody", policy_mapping_fn=learner_only)
        with pytest.raises(ValueError, match="still maps agent 1 to it"):
            algo.remove_policy("past_self")  # the current mapping fn gives past_self to agent 1
        with pytest.raises(TypeError, match="unexpected keyword"):
            algo.remove_policy("past_self", policy_mapping_fn=learner_only, add_to_learners=True)
        assert algo.config is config and algo.get_policy("past_self") is not None

        algo.remove_policy("past_self", policy_mapping_fn=learner_only)
        assert algo.get_policy("past_self") is None and "past_self" not in evaluation.policy_map
        assert sorted(algo.config.policies) == ["heuristic", "learner"]
        assert algo.config.policy_mapping_fn is learner_only
        for runner in (algo.workers.local_worker(), evaluation):
            assert _runner_view(runner) == (["heuristic", "learner"], ["learner"], "learner")
        # ongoing episodes that used past_self were dropped: nothing asks for it
        assert set(algo.workers.sample().policy_batches) == {"learner"}
        assert "evaluation" in algo.train()
        with pytest.raises(ValueError, match="only policy"):
            algo.remove_policy("heuristic")
            algo.remove_policy("learner")
    finally:
        algo.stop()


def test_remove_policy_takes_it_out_of_policies_to_train_and_refuses_the_single_agent_policy():
    algo = _config().build_algo()
    try:
        algo.add_policy("past_self", policy_cls=PGPolicyV2, policy_mapping_fn=learner_and_past_self,
                        policies_to_train=["learner", "past_self"])
        algo.remove_policy("past_self", policy_mapping_fn=learner_and_heuristic)
        assert list(algo.config.policies_to_train) == ["learner"]
        assert algo.workers.local_worker().policies_to_train() == ["learner"]
    finally:
        algo.stop()
    single = (PolicyAlgorithmConfig(algo_class=Algorithm).environment("CartPole-v1")
              .multi_agent(policies={"default_policy": PolicySpec(policy_class=PGPolicyV2),
                                     "other": PolicySpec(policy_class=PolePointer)})
              .debugging(seed=0, logger_config={"type": "none"})).build_algo()
    try:
        with pytest.raises(ValueError, match="acts with it"):
            single.remove_policy("default_policy")
        single.remove_policy("other")
        assert sorted(single.config.policies) == ["default_policy"]
    finally:
        single.stop()


# -- gap 2: a remote runner that Ray restarts is built with the added policy -----------------------------------

@pytest.fixture
def local_ray():
    ray = pytest.importorskip("ray")
    from ray import cloudpickle

    import test_policy_feature_mixes

    modules = [sys.modules[__name__], test_policy_feature_mixes]  # the actors cannot import the test modules
    for module in modules:
        cloudpickle.register_pickle_by_value(module)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    for module in modules:
        cloudpickle.unregister_pickle_by_value(module)


@pytest.mark.slow
def test_a_restarted_remote_runner_has_the_added_policy_and_its_weights(local_ray):
    """Remote training and evaluation runners after add_policy, a restart and remove_policy. 12 s (5 s of it
    Ray's start) on 2 cores at load 5."""
    config = _config(evaluation_interval=1, evaluation_num_env_runners=1, evaluation_duration=2)
    config = config.env_runners(num_env_runners=1).fault_tolerance(
        restart_failed_env_runners=True, delay_between_env_runner_restarts_s=0.0)
    algo = config.build_algo()
    try:
        added = algo.add_policy("past_self", policy_cls=PGPolicyV2, policy_mapping_fn=learner_and_past_self,
                                policies_to_train=["learner"])
        frozen = added.get_weights()
        group = algo.env_runner_group
        local_ray.kill(group._actors.actor(1), no_restart=True)
        for _ in range(50):  # ray.kill is asynchronous: ping until the group sees the runner down
            if not group.foreach_env_runner(lambda runner: runner.ping(), local_env_runner=False):
                break
            time.sleep(0.1)
        assert group.num_healthy_remote_workers() == 0
        batch = group.sample()  # the runner is rebuilt first
        assert group.fault_tolerance_metrics()["num_remote_env_runner_restarts"] == 1
        assert set(batch.policy_batches) == {"learner", "past_self"}
        (view, weights), = group.foreach_env_runner(
            lambda runner: (_runner_view(runner), runner.get_policy("past_self").get_weights()),
            local_env_runner=False)
        assert view == (["heuristic", "learner", "past_self"], ["learner"], "past_self")
        assert _same_weights(frozen, weights)
        evaluation = algo.eval_env_runner_group
        (view, weights), = evaluation.foreach_env_runner(
            lambda runner: (_runner_view(runner), runner.get_policy("past_self").get_weights()),
            local_env_runner=False)
        assert view[0] == ["heuristic", "learner", "past_self"] and view[2] == "past_self"
        assert _same_weights(frozen, weights)

        algo.remove_policy("past_self", policy_mapping_fn=learner_only)
        for runners in (group, evaluation):
            assert runners.foreach_env_runner(_runner_view, local_env_runner=False) == [
                (["heuristic", "learner"], ["learner"], "learner")]
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] >= 2
    finally:
        algo.stop()


# -- gap 4: a checkpoint after add_policy, restored in a new process by the user's script ----------------------

_SCRIPT = '''
import hashlib
import json
import sys

import numpy as np
import torch

from relayrl import Algorithm, MultiAgentEnv, Postprocessing, SampleBatch, compute_advantages
from relayrl.core.policy_spec import PolicySpec
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class
import gymnasium as gym


class TwoChains(MultiAgentEnv):
    """Two agents, each on its own five-state chain; moving right reaches the reward at the end."""

    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = [0, 1]
        self.observation_spaces = {a: gym.spaces.Discrete(5) for a in self.agents}
        self.action_spaces = {a: gym.spaces.Discrete(2) for a in self.agents}

    def reset(self, *, seed=None, options=None):
        self.state, self.t = {0: 0, 1: 0}, 0
        return dict(self.state), {}

    def step(self, actions):
        self.t += 1
        for a, action in actions.items():
            self.state[a] = max(0, min(4, self.state[a] + (1 if action == 1 else -1)))
        done = self.t >= 8
        return (dict(self.state), {a: float(self.state[a] == 4) for a in actions},
                {"__all__": done}, {"__all__": False}, {})


def returns(policy, sample_batch, other_agent_batches=None, episode=None):
    return compute_advantages(sample_batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def pg_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    logp = dist_class(logits, model).logp(train_batch[SampleBatch.ACTIONS])
    return -torch.mean(logp * train_batch[Postprocessing.ADVANTAGES])


ChainPolicy = build_policy_class("ChainPolicy", "torch", loss_fn=pg_loss, postprocess_fn=returns)


class AlwaysRight(Policy):
    def compute_actions(self, obs_batch, state_batches=None, **kwargs):
        return np.ones(len(obs_batch), np.int64), [], {}


def main_only(agent_id, episode=None, **kwargs):
    return "main"


def main_and_past(agent_id, episode=None, **kwargs):
    return "main" if agent_id == 0 else "past"


def make_config():
    return (PolicyAlgorithmConfig(algo_class=Algorithm).environment(TwoChains)
            .multi_agent(policies={"main": PolicySpec(policy_class=ChainPolicy),
                                   "right": PolicySpec(policy_class=AlwaysRight)},
                         policy_mapping_fn=main_only, policies_to_train=["main"])
            .training(train_batch_size=32, lr=0.05, model={"fcnet_hiddens": [8]})
            .debugging(seed=3, logger_config={"type": "none"}))


def digest(weights):
    h = hashlib.sha256()
    for name in sorted(weights):
        h.update(name.encode() + np.ascontiguousarray(weights[name]).tobytes())
    return h.hexdigest()


def facts(algo):
    return {"policies": sorted(algo.config.policies), "local": sorted(algo.workers.local_worker().policy_map),
            "mapping": [algo.config.policy_mapping_fn(a) for a in (0, 1)],
            "to_train": list(algo.config.policies_to_train),
            "past": digest(algo.get_policy("past").get_weights()),
            "main": digest(algo.get_policy("main").get_weights())}


def save(path):
    algo = make_config().build_algo()
    algo.train()
    algo.add_policy("past", policy=algo.get_policy("main"), policy_mapping_fn=main_and_past,
                    policies_to_train=["main"])
    algo.train()
    algo.remove_policy("right")
    algo.save_to_path(path)
    out = facts(algo)
    algo.stop()
    return out


def resume(path):
    algo = Algorithm.from_checkpoint(path, trusted=[sys.modules[__name__]])
    out = facts(algo)
    batch = algo.workers.sample()
    out["sampled"] = sorted(batch.policy_batches)
    past = algo.get_policy("past").get_weights()
    algo.train()
    out["past_frozen"] = digest(algo.get_policy("past").get_weights()) == digest(past)
    algo.stop()
    return out


if __name__ == "__main__":
    print("FACTS", json.dumps(save(sys.argv[1])))
'''


def _facts(run):
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads([line for line in run.stdout.splitlines() if line.startswith("FACTS ")][-1][6:])


def test_a_checkpoint_after_add_and_remove_policy_restores_in_a_new_process(tmp_path):
    """The script adds `past` (a frozen copy of `main`) and removes `right`, saves, and a new process restores it:
    the same policies, weights, mapping fn and policies_to_train. ~8 s on 2 loaded cores."""
    (tmp_path / "user_script.py").write_text(textwrap.dedent(_SCRIPT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path)] + sys.path), "OMP_NUM_THREADS": "1"}
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    path = str(tmp_path / "checkpoint")
    saved = _facts(subprocess.run([sys.executable, "user_script.py", path], **run))
    resume = "import json, sys, user_script; print('FACTS', json.dumps(user_script.resume(sys.argv[1])))"
    resumed = _facts(subprocess.run([sys.executable, "-c", resume, path], **run))
    assert saved["policies"] == saved["local"] == ["main", "past"]
    assert saved["mapping"] == ["main", "past"] and saved["to_train"] == ["main"]
    assert {k: resumed[k] for k in saved} == saved
    assert resumed["sampled"] == ["main", "past"] and resumed["past_frozen"]
