"""The old-stack Policy API mixed with other features, as users' scripts mix them: a TorchPolicyV2 subclass
(RLlib's subclassing form) with a custom model on Box and Dict observations, on remote runners with remote
greedy evaluation; two Policy classes in one multi-agent run with both mapping-function signatures; a policy's
checkpoint added to a new algorithm (league / self-play); a recurrent custom model's state through
compute_single_action; the old stack's callbacks on remote runners."""
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl.algorithms.algorithm import Algorithm
from relayrl.callbacks import DefaultCallbacks
from relayrl.core.policy_spec import PolicySpec
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.models import ModelCatalog
from relayrl.models.torch.torch_modelv2 import TorchModelV2
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.postprocessing import compute_advantages
from relayrl.policy.torch_policy_v2 import TorchPolicyV2

BASE = {"train_batch_size": 100, "seed": 0, "logger_config": {"type": "none"}}


class DictCartPole(gym.Env):
    """CartPole with a Dict observation: positions and velocities apart."""

    def __init__(self, config=None):
        self.inner = gym.make("CartPole-v1")
        part = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.observation_space = gym.spaces.Dict({"pos": part, "vel": part})
        self.action_space = self.inner.action_space

    def _split(self, obs):
        return {"pos": obs[[0, 2]].astype(np.float32), "vel": obs[[1, 3]].astype(np.float32)}

    def reset(self, *, seed=None, options=None):
        obs, info = self.inner.reset(seed=seed)
        return self._split(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.inner.step(action)
        return self._split(obs), reward, terminated, truncated, info


class CartPoleModel(TorchModelV2, nn.Module):
    """Reads a Dict observation by its parts (`input_dict["obs"]["pos"]`), a Box one as it is."""

    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        nn.Module.__init__(self)
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, num_outputs))
        self.seen_parts = None

    def forward(self, input_dict, state, seq_lens):
        obs = input_dict["obs"]
        if isinstance(obs, dict):  # back in CartPole's order: x, x_dot, theta, theta_dot
            self.seen_parts = {k: tuple(v.shape[1:]) for k, v in obs.items()}
            obs = torch.stack([obs["pos"][:, 0], obs["vel"][:, 0], obs["pos"][:, 1], obs["vel"][:, 1]], 1)
        assert input_dict["obs_flat"].shape[1] == 4
        return self.net(obs.float()), state

    def value_function(self):
        return torch.zeros(1)


ModelCatalog.register_custom_model("feature_mix_model", CartPoleModel)


class PGPolicyV2(TorchPolicyV2):
    """RLlib's subclassing form: __init__ with max_seq_len, make_model, postprocess_trajectory and loss methods."""

    def __init__(self, observation_space, action_space, config):
        TorchPolicyV2.__init__(self, observation_space, action_space, config,
                               max_seq_len=config["model"]["max_seq_len"])
        self._initialize_loss_from_dummy_batch()

    def make_model(self):
        return ModelCatalog.get_model_v2(self.observation_space, self.action_space, self.action_space.n,
                                         self.config["model"], framework="torch", name="pg")

    def postprocess_trajectory(self, sample_batch, other_agent_batches=None, episode=None):
        return compute_advantages(sample_batch, 0.0, self.config["gamma"], use_gae=False, use_critic=False)

    def loss(self, model, dist_class, train_batch):
        logits, _ = model(train_batch)
        return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


class PGAlgo(Algorithm):
    @classmethod
    def get_default_policy_class(cls, config):
        return PGPolicyV2


def _same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(v, b[k]) for k, v in a.items())


# -- 1. a TorchPolicyV2 subclass with a custom model, on Box and Dict observations --------------------------------

def test_torch_policy_v2_subclass_with_a_custom_model_on_box_and_dict_observations():
    results = {}
    for env in ("CartPole-v1", DictCartPole):
        algo = PGAlgo(config={**BASE, "env": env, "lr": 0.01, "model": {"custom_model": "feature_mix_model"}})
        try:
            policy = algo.get_policy()
            assert isinstance(policy.model, CartPoleModel) and policy.config["model"]["max_seq_len"] == 20
            before = policy.get_weights()
            results[env] = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(2)]
            assert not _same_weights(before, policy.get_weights())  # loss() learned
            if env is DictCartPole:
                assert policy.observation_space.shape == (4,)
                assert isinstance(policy.observation_space.original_space, gym.spaces.Dict)
                assert policy.model.seen_parts == {"pos": (2,), "vel": (2,)}
                action = algo.compute_single_action(DictCartPole().reset(seed=0)[0], explore=False)
                assert action in (0, 1)
        finally:
            algo.stop()
    # the Dict run is the Box run: the model puts the parts back in CartPole's order
    assert results["CartPole-v1"] == results[DictCartPole]


def test_torch_policy_v2_default_model_and_wrong_overrides():
    class DefaultModelPolicy(TorchPolicyV2):
        def loss(self, model, dist_class, train_batch):
            logits, _ = model(train_batch)
            return -dist_class(logits, model).logp(train_batch["actions"]).mean()

    space, actions = gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(2)
    policy = DefaultModelPolicy(space, actions, {"model": {"fcnet_hiddens": [8]}})
    assert policy.model.num_outputs == 2 and policy.get_initial_state() == []
    action, state, extra = policy.compute_single_action(np.zeros(3, np.float32))
    assert action in (0, 1) and "action_logp" in extra

    class AlwaysOne(DefaultModelPolicy):  # RLlib's keyword signature; obs_batch is the input dict
        def action_distribution_fn(self, model, *, obs_batch, state_batches, **kwargs):
            assert obs_batch["obs"].shape == (1, 3) and "explore" in kwargs
            return torch.tensor([[-50.0, 50.0]]), self.dist_class, []

    assert AlwaysOne(space, actions, {}).compute_single_action(np.zeros(3, np.float32), explore=True)[0] == 1

    class BothOverrides(DefaultModelPolicy):
        def make_model(self):
            return None

        def make_model_and_action_dist(self):
            return None, None

    with pytest.raises(ValueError, match="only one of make_model and make_model_and_action_dist"):
        BothOverrides(space, actions, {})


def test_restore_original_dimensions_as_rllib():
    from relayrl.policy.preprocessors import get_preprocessor, restore_original_dimensions

    space = gym.spaces.Dict({"a": gym.spaces.Discrete(3), "b": gym.spaces.Tuple(
        (gym.spaces.Box(0, 1, (2, 2), np.float32), gym.spaces.MultiDiscrete([2, 3])))})
    prep = get_preprocessor(space)
    obs = space.sample()
    flat = torch.as_tensor(prep.transform_batch([obs, obs]))
    parts = restore_original_dimensions(flat, prep.observation_space)
    assert parts["a"].shape == (2, 3) and parts["a"][0].argmax() == obs["a"]  # one-hot, as RLlib
    assert np.allclose(parts["b"][0][1].numpy(), obs["b"][0])
    assert parts["b"][1].shape == (2, 5)
    assert restore_original_dimensions(flat, gym.spaces.Box(0, 1, (flat.shape[1],))) is flat


# -- 2 and 6. remote runners, remote greedy evaluation, the old stack's callbacks ----------------------------------

class OldStackCallbacks(DefaultCallbacks):
    """Runs in the remote runners (postprocess, sample end) and in the driver (learn on batch)."""

    def on_postprocess_trajectory(self, *, worker, episode, agent_id, policy_id, policies, postprocessed_batch,
                                  original_batches, **kwargs):
        assert type(worker).__name__ == "PolicyRunner" and worker.worker_index > 0
        assert policies[policy_id] is worker.get_policy(policy_id)
        assert len(original_batches[agent_id]) == 3  # (policy_id, policy, batch), as RLlib
        postprocessed_batch["marked"] = np.full(postprocessed_batch.count, worker.worker_index, np.float32)

    def on_sample_end(self, *, worker=None, samples=None, **kwargs):
        samples["sample_end_seen"] = np.ones(samples.count, np.float32)

    def on_learn_on_batch(self, *, policy, train_batch, result, **kwargs):
        result["marked_rows"] = int((train_batch["marked"] > 0).sum())
        result["sample_end_rows"] = int(train_batch["sample_end_seen"].sum())


@pytest.fixture
def ray_local():
    ray = pytest.importorskip("ray")
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actors cannot import this test module
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.slow  # starts Ray and 3 actors: 13-17 s at a load average of ~8 on the 2-core machine
def test_remote_runners_and_remote_greedy_evaluation_with_a_custom_model_and_old_stack_callbacks(ray_local):
    from relayrl.policy.execution import synchronous_parallel_sample, train_one_step

    algo = PGAlgo(config={**BASE, "env": DictCartPole, "model": {"custom_model": "feature_mix_model"},
                          "num_env_runners": 2, "num_cpus_per_env_runner": 0.5, "callbacks": OldStackCallbacks,
                          "evaluation_interval": 1, "evaluation_num_env_runners": 1, "evaluation_duration": 2,
                          "evaluation_config": {"explore": False}})
    try:
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] == 2
        trained = algo.get_policy().get_weights()
        remote = algo.env_runner_group.foreach_env_runner(lambda r: r.get_policy().get_weights(),
                                                          local_env_runner=False)
        assert len(remote) == 2 and all(_same_weights(trained, w) for w in remote)

        def greedy_check(runner):
            batch = runner.sample(num_episodes=1)
            return (runner.get_policy().get_weights(), runner.config.explore, type(runner.get_policy().model),
                    bool(np.array_equal(batch["actions"], batch["action_dist_inputs"].argmax(axis=1))))

        [(weights, explore, model_class, greedy)] = algo.eval_env_runner_group.foreach_env_runner(
            greedy_check, local_env_runner=False)
        assert _same_weights(trained, weights) and explore is False and greedy
        assert model_class.__name__ == "CartPoleModel"  # the driver's registered custom model reached the actor

        batch = synchronous_parallel_sample(worker_set=algo.workers, max_env_steps=100)
        assert set(np.unique(batch["marked"])) == {1.0, 2.0} and (batch["sample_end_seen"] == 1).all()
        info = train_one_step(algo, batch)["default_policy"]
        assert info["marked_rows"] == info["sample_end_rows"] == batch.count

        # add_policy reaches the remote and evaluation runners too, with the given policy's weights
        frozen = algo.add_policy("frozen", policy=algo.get_policy(), policies_to_train=["default_policy"])
        copies = algo.env_runner_group.foreach_env_runner(lambda r: r.get_policy("frozen").get_weights(),
                                                          local_env_runner=False)
        copies += algo.eval_env_runner_group.foreach_env_runner(lambda r: r.get_policy("frozen").get_weights())
        assert len(copies) == 4 and all(_same_weights(frozen.get_weights(), w) for w in copies)
    finally:
        algo.stop()


# -- 3 and 4. two Policy classes in a multi-agent run; a policy's checkpoint added to another run -------------------

TwoCartPoles = make_multi_agent("CartPole-v1")


class PolePointer(Policy):
    """A fixed heuristic with compute_actions only: push the cart the way the pole leans."""

    def compute_actions(self, obs_batch, state_batches=None, **kwargs):
        return (np.asarray(obs_batch)[:, 2] > 0).astype(np.int64), [], {}


def _new_signature(agent_id, episode, **kwargs):
    return "learner" if agent_id == 0 else "heuristic"


def _old_signature(agent_id, episode, worker, **kwargs):
    assert type(worker).__name__ == "MultiAgentPolicyRunner"
    return "learner" if agent_id == 0 else "heuristic"


def _league_config(mapping_fn):
    return (PolicyAlgorithmConfig(algo_class=Algorithm).environment(TwoCartPoles, env_config={"num_agents": 2})
            .multi_agent(policies={"learner": PolicySpec(policy_class=PGPolicyV2),
                                   "heuristic": PolicySpec(policy_class=PolePointer)},
                         policy_mapping_fn=mapping_fn, policies_to_train=["learner"])
            .training(train_batch_size=100, lr=0.01).debugging(seed=0, logger_config={"type": "none"}))


@pytest.mark.parametrize("mapping_fn", [_new_signature, _old_signature])
def test_a_learning_and_a_heuristic_policy_with_either_mapping_signature(mapping_fn):
    algo = _league_config(mapping_fn).build_algo()
    try:
        learner = algo.get_policy("learner")
        before = learner.get_weights()
        batch = algo.workers.sample()
        assert set(batch.policy_batches) == {"learner", "heuristic"}
        heuristic = batch["heuristic"]
        assert np.array_equal(heuristic["actions"], (heuristic["obs"][:, 2] > 0).astype(np.int64))
        returns = algo.train()["env_runners"]["module_episode_returns_mean"]
        assert set(returns) == {"learner", "heuristic"} and min(returns.values()) > 0
        assert not _same_weights(before, learner.get_weights())
        assert algo.workers.local_worker().policies_to_train() == ["learner"]
    finally:
        algo.stop()


def test_a_policy_checkpoint_added_to_a_new_algorithm_as_a_frozen_opponent(tmp_path):
    first = _league_config(_new_signature).build_algo()
    try:
        first.train()
        first.get_policy("learner").export_checkpoint(str(tmp_path / "learner"))
        exported = first.get_policy("learner").get_weights()
    finally:
        first.stop()
    # only the policy's own class is trusted: the run's other classes and mapping fn are not in its checkpoint
    restored = Policy.from_checkpoint(str(tmp_path / "learner"), trusted=[PGPolicyV2])
    assert type(restored) is PGPolicyV2 and _same_weights(exported, restored.get_weights())

    algo = _league_config(_new_signature).build_algo()
    try:
        with pytest.raises(ValueError, match="exists already"):
            algo.add_policy("learner", policy=restored)
        with pytest.raises(ValueError, match="exactly one of policy_cls"):
            algo.add_policy("past_self", policy_cls=PGPolicyV2, policy=restored)
        added = algo.add_policy("past_self", policy=restored,
                                policy_mapping_fn=lambda agent_id, episode, **kw: "learner" if agent_id == 0
                                else "past_self")
        assert added is algo.get_policy("past_self") and _same_weights(exported, added.get_weights())
        learner_before = algo.get_policy("learner").get_weights()
        algo.train()
        assert set(algo.workers.sample().policy_batches) == {"learner", "past_self"}
        assert _same_weights(exported, added.get_weights())  # frozen: not in policies_to_train
        assert not _same_weights(learner_before, algo.get_policy("learner").get_weights())
        # policy_cls + policy_state (RLlib's other form), and policies_to_train changed with it
        state = restored.get_state()
        second = algo.add_policy("trained_copy", policy_cls=PGPolicyV2, policy_state=state,
                                 policies_to_train=["learner", "trained_copy"])
        assert _same_weights(exported, second.get_weights())
        assert algo.workers.local_worker().policies_to_train() == ["learner", "trained_copy"]
    finally:
        algo.stop()


# -- 5. a recurrent custom model: compute_single_action round-trips its state ---------------------------------------

class GRUModel(TorchModelV2, nn.Module):
    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        nn.Module.__init__(self)
        self.cell = nn.GRUCell(obs_space.shape[0], 8)
        self.head = nn.Linear(8, num_outputs)

    def get_initial_state(self):
        return [torch.zeros(8)]

    def forward(self, input_dict, state, seq_lens):
        hidden = self.cell(input_dict["obs_flat"].float(), state[0])
        return self.head(hidden), [hidden]

    def value_function(self):
        return torch.zeros(1)


class RecurrentPolicyV2(TorchPolicyV2):
    def make_model(self):
        return GRUModel(self.observation_space, self.action_space, 2, self.config["model"], "gru")

    def loss(self, model, dist_class, train_batch):
        logits, _ = model(train_batch)
        return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["rewards"])


class RecurrentAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return RecurrentPolicyV2


def test_recurrent_custom_model_state_round_trips_through_compute_single_action():
    algo = RecurrentAlgo(config={**BASE, "env": "CartPole-v1"})
    try:
        policy = algo.get_policy()
        initial = policy.get_initial_state()
        assert policy.is_recurrent() and [s.shape for s in initial] == [(8,)]
        obs = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
        action, state1, _ = policy.compute_single_action(obs, state=initial, explore=False)
        _, state2, _ = policy.compute_single_action(obs, state=state1, explore=False)
        with torch.no_grad():
            h1 = policy.model.cell(torch.as_tensor(obs)[None], torch.zeros(1, 8))
            h2 = policy.model.cell(torch.as_tensor(obs)[None], h1)
        assert np.allclose(state1[0], h1[0].numpy(), atol=1e-6) and np.allclose(state2[0], h2[0].numpy(), atol=1e-6)
        same, state_out, _ = algo.compute_single_action(obs, state=initial, policy_id="default_policy", explore=False)
        assert same == action and np.allclose(state_out[0], state1[0])
        algo.train()
        batch = algo.workers.sample()
        assert "state_in_0" in batch and batch["state_in_0"].shape[1:] == (8,)
    finally:
        algo.stop()


def test_runners_carry_only_the_custom_models_their_policies_name():
    """Another registered model (e.g. one of a module Ray's workers cannot import) must not travel with them."""
    from relayrl.policy.rollout.worker_set import policy_runner_class

    ModelCatalog.register_custom_model("feature_mix_unused", GRUModel)
    config = (PolicyAlgorithmConfig(algo_class=PGAlgo).environment("CartPole-v1")
              .training(model={"custom_model": "feature_mix_model"}))
    runner_class = policy_runner_class({"default_policy": PolicySpec(policy_class=PGPolicyV2)}, None, False, config)
    assert runner_class.MODEL_CATALOG == {"models": {"feature_mix_model": CartPoleModel}, "action_dists": {}}
