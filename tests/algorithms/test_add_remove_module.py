"""Algorithm.add_module / remove_module (and add_policy / remove_policy) on a running multi-agent PPO: RLlib's
league / self-play flow (a snapshot of main joins as a frozen opponent), checkpoints, callbacks, bad input."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPO, MultiAgentEnv, PPOConfig, RLlibCallback, RLModuleSpec
from relayrl.algorithms.multi_agent_mapping import UnknownModuleIdError
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.examples.rl_modules.classes.random_rlm import RandomRLModule
from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole


def to_main(agent_id, episode, **kwargs):
    return "main"


def agent1_to_snapshot(agent_id, episode, **kwargs):
    return "main" if agent_id == 0 else "main_v0"


def agent1_to_random(agent_id, episode, **kwargs):
    return "main" if agent_id == 0 else "random"


def config():
    return (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
            .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .multi_agent(policies={"main"}, policy_mapping_fn=to_main, policies_to_train=["main"])
            .debugging(seed=0))


def weights(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def module_ids_of(episodes, agent_id):
    return {episode.module_for(agent_id) for episode in episodes if agent_id in episode.agent_ids}


@pytest.fixture
def algo():
    algo = config().build_algo()
    yield algo
    algo.stop()


def add_snapshot(algo):
    # RLModuleSpec(): the algorithm's default module, as main's
    algo.add_module("main_v0", RLModuleSpec(), new_agent_to_module_mapping_fn=agent1_to_snapshot,
                    new_should_module_be_updated=["main"])
    algo.set_weights({"main_v0": algo.get_weights(["main"])["main"]})


def test_a_frozen_snapshot_joins_acts_for_agent_1_and_keeps_its_weights(algo):
    algo.train()
    add_snapshot(algo)
    learner = algo.learner_group._learner
    assert "main_v0" in learner.module and "main_v0" not in learner._optimizers and "main" in learner._optimizers
    frozen = weights(learner.module["main_v0"])
    assert same(frozen, weights(learner.module["main"]))  # set_weights copied main's
    assert same(weights(algo.env_runner.module["main_v0"]), {k: v for k, v in frozen.items()
                                                           if k in algo.env_runner.module["main_v0"].state_dict()})
    assert module_ids_of(algo.env_runner.sample(num_timesteps=50), 1) == {"main_v0"}
    result = algo.train()
    assert "main" in result["learners"]
    assert same(frozen, weights(learner.module["main_v0"]))  # not trained
    assert not same(frozen, weights(learner.module["main"]))  # main goes on learning
    assert set(algo.config.policies) == {"main", "main_v0"} and algo.config.policies_to_train == ["main"]
    assert algo.config.policy_mapping_fn is agent1_to_snapshot


def test_a_heuristic_module_class_joins_has_no_optimizer_and_is_in_checkpoints(algo, tmp_path):
    algo.add_module("random", RLModuleSpec(module_class=RandomRLModule),
                    new_agent_to_module_mapping_fn=agent1_to_random, new_should_module_be_updated=["main"])
    assert "random" not in algo.learner_group._learner._optimizers
    algo.train()
    assert module_ids_of(algo.env_runner.sample(num_timesteps=50), 1) == {"random"}
    fresh = type(algo).from_checkpoint(algo.save_to_path(str(tmp_path / "ckpt")), trusted=[__name__])
    try:
        assert isinstance(fresh.get_module("random"), RandomRLModule)
        fresh.train()
        assert module_ids_of(fresh.env_runner.sample(num_timesteps=50), 1) == {"random"}
    finally:
        fresh.stop()


def test_a_module_removed_or_frozen_after_training_reports_no_more_learner_stats(algo):
    """Its last losses stayed in result["learners"] at every later iteration."""
    algo.add_module("main_v0", RLModuleSpec(), new_agent_to_module_mapping_fn=agent1_to_snapshot,
                    new_should_module_be_updated=["main", "main_v0"])
    assert {"main", "main_v0"} <= set(algo.train()["learners"])
    algo.add_module("random", RLModuleSpec(module_class=RandomRLModule), new_agent_to_module_mapping_fn=agent1_to_random,
                    new_should_module_be_updated=["main"])  # main_v0 frozen now (and no agent maps to it)
    learners = algo.train()["learners"]
    assert "main" in learners and "main_v0" not in learners
    algo.remove_module("main_v0", new_agent_to_module_mapping_fn=agent1_to_random)
    assert "main_v0" not in algo.train()["learners"]


def test_remove_module_drops_it_everywhere_and_training_goes_on(algo):
    add_snapshot(algo)
    algo.train()
    algo.remove_module("main_v0", new_agent_to_module_mapping_fn=to_main)
    assert "main_v0" not in algo.learner_group._learner.module and "main_v0" not in algo.env_runner.module
    assert set(algo.config.policies) == {"main"} and algo.config.policies_to_train == ["main"]
    assert module_ids_of(algo.env_runner.sample(num_timesteps=50), 1) == {"main"}
    algo.train()


def test_bad_input_raises_and_changes_nothing(algo):
    with pytest.raises(ValueError, match="exists already"):
        algo.add_module("main", RLModuleSpec())
    with pytest.raises(ValueError, match="no such module"):
        algo.remove_module("nope")
    with pytest.raises(ValueError, match="only module"):
        algo.remove_module("main")
    add_snapshot(algo)
    before = algo.config
    with pytest.raises(UnknownModuleIdError, match="main_v0"):  # the mapping fn still returns it
        algo.remove_module("main_v0")
    with pytest.raises(UnknownModuleIdError, match="nope"):
        algo.add_module("other", RLModuleSpec(), new_agent_to_module_mapping_fn=lambda a, e, **k: "nope")
    with pytest.raises(ValueError, match="config_overrides"):
        algo.add_module("other", RLModuleSpec(), config_overrides={"lr": 0.1},
                        new_agent_to_module_mapping_fn=agent1_to_snapshot)
    with pytest.raises(TypeError, match="RLModuleSpec"):
        algo.add_module("other", "not a spec")
    with pytest.raises(ValueError, match="cannot handle the action space"):  # a spec that cannot build
        algo.add_module("other", RLModuleSpec(action_space=gym.spaces.Dict({"a": gym.spaces.Discrete(2)})))
    assert algo.config is before and "main_v0" in algo.env_runner.module and "other" not in algo.env_runner.module
    assert "other" not in algo.learner_group._learner.module
    algo.train()


def test_a_checkpoint_after_add_module_restores_it_in_a_new_algorithm(algo, tmp_path):
    add_snapshot(algo)
    algo.train()
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    snapshot = weights(algo.learner_group._learner.module["main_v0"])
    fresh = type(algo).from_checkpoint(path, trusted=[__name__],
                                       config_overrides={"policy_mapping_fn": agent1_to_snapshot})
    try:
        assert set(fresh.config.policies) == {"main", "main_v0"} and fresh.config.policies_to_train == ["main"]
        assert same(snapshot, weights(fresh.learner_group._learner.module["main_v0"]))
        fresh.train()
        assert same(snapshot, weights(fresh.learner_group._learner.module["main_v0"]))
    finally:
        fresh.stop()


class SnapshotEachIteration(RLlibCallback):
    """As RLlib's self_play_with_open_spiel example: a new snapshot of main joins in on_train_result."""

    def on_train_result(self, *, algorithm, result, **kwargs):
        module_id = f"main_v{algorithm.iteration}"

        def mapping(agent_id, episode, **kw):  # agent 1 plays the newest snapshot
            return "main" if agent_id == 0 else module_id

        main = algorithm.get_module("main")
        algorithm.add_module(module_id, RLModuleSpec.from_module(main), new_agent_to_module_mapping_fn=mapping,
                             new_should_module_be_updated=["main"])
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: main.get_state()}}}})


def test_add_module_from_on_train_result():
    algo = config().callbacks(SnapshotEachIteration).build_algo()
    try:
        algo.train()
        algo.train()
        assert set(algo.config.policies) == {"main", "main_v1", "main_v2"}
        learner = algo.learner_group._learner
        assert set(learner.module.keys()) == {"main", "main_v1", "main_v2"} and set(learner._optimizers) == {"main"}
        assert module_ids_of(algo.env_runner.sample(num_timesteps=50), 1) == {"main_v2"}
        main = weights(learner.module["main"])
        runner_v1, runner_v2 = weights(algo.env_runner.module["main_v1"]), weights(algo.env_runner.module["main_v2"])
        assert same(runner_v2, {k: v for k, v in main.items() if k in runner_v2})  # set_state reached the runner
        assert not same(runner_v1, {k: v for k, v in main.items() if k in runner_v1})  # the older snapshot
    finally:
        algo.stop()


def test_add_policy_and_remove_policy_are_the_old_names(algo):
    algo.add_policy("main_v0", policy_mapping_fn=agent1_to_snapshot, policies_to_train=["main"],
                    policy_state=algo.get_weights(["main"])["main"])
    assert same(weights(algo.learner_group._learner.module["main_v0"]),
                weights(algo.learner_group._learner.module["main"]))
    with pytest.raises(ValueError, match="RLModules, not old-stack"):
        algo.add_policy("p", policy_cls=object)
    algo.remove_policy("main_v0", policy_mapping_fn=to_main)
    assert set(algo.config.policies) == {"main"}


def test_the_evaluation_runners_get_the_module_too():
    algo = config().evaluation(evaluation_interval=1, evaluation_duration=2).build_algo()
    try:
        add_snapshot(algo)
        assert "main_v0" in algo.eval_env_runner.module
        assert algo.eval_env_runner.config.policy_mapping_fn is agent1_to_snapshot
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] >= 2
        algo.remove_module("main_v0", new_agent_to_module_mapping_fn=to_main)
        assert "main_v0" not in algo.eval_env_runner.module
        algo.train()
    finally:
        algo.stop()


@pytest.fixture
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_remote_env_runners_get_and_drop_the_module(local_ray):
    algo = config().env_runners(num_env_runners=1).build_algo()
    try:
        algo.train()
        add_snapshot(algo)
        main = algo.get_weights(["main"])["main"]
        remote = algo.env_runner_group.foreach_env_runner(
            lambda runner: ({mid: {k: v.detach().cpu().numpy() for k, v in m.state_dict().items()}
                             for mid, m in runner.module.items()},
                            {e.module_for(1) for e in runner.sample(num_timesteps=50)}), local_env_runner=False)
        (modules, agent1_modules), = remote
        assert set(modules) == {"main", "main_v0"} and agent1_modules == {"main_v0"}
        assert all(np.array_equal(v, main[k]) for k, v in modules["main_v0"].items() if k in main)
        algo.train()
        algo.remove_module("main_v0", new_agent_to_module_mapping_fn=to_main)
        ids = algo.env_runner_group.foreach_env_runner(lambda runner: sorted(runner.module.keys()),
                                                      local_env_runner=False)
        assert ids == [["main"]]
        algo.train()
    finally:
        algo.stop()


def agent1_to_second(agent_id, episode, **kwargs):
    return "main" if agent_id == 0 else "second"


@pytest.mark.parametrize("algo_name", ["APPO", "IMPALA", "DQN", "SAC"])
def test_a_module_that_trains_joins_and_leaves_other_algorithms(algo_name):
    from relayrl import APPOConfig, DQNConfig, IMPALAConfig, SACConfig
    from relayrl.testing.multi_agent_example_envs import MultiAgentPendulum

    cls = {"APPO": APPOConfig, "IMPALA": IMPALAConfig, "DQN": DQNConfig, "SAC": SACConfig}[algo_name]
    env = MultiAgentPendulum if algo_name == "SAC" else MultiAgentCartPole
    cfg = (cls().environment(env, env_config={"num_agents": 2}).rl_module(model_config={"fcnet_hiddens": [8]})
           .multi_agent(policies={"main"}, policy_mapping_fn=to_main).debugging(seed=0))
    if algo_name in ("DQN", "SAC"):
        cfg.training(num_steps_sampled_before_learning_starts=50, train_batch_size=32)
        cfg.reporting(min_sample_timesteps_per_iteration=100)
    else:
        cfg.training(train_batch_size=100)
    algo = cfg.build_algo()
    try:
        algo.train()
        algo.add_module("second", RLModuleSpec(), new_agent_to_module_mapping_fn=agent1_to_second)  # trains
        before = weights(algo.learner_group.get_module("second"))
        algo.train()
        algo.train()
        assert not same(before, weights(algo.learner_group.get_module("second")))
        algo.remove_module("second", new_agent_to_module_mapping_fn=to_main)
        assert "second" not in algo.learner_group.get_module()
        algo.train()
    finally:
        algo.stop()


def test_a_single_agent_algorithm_says_modules_are_added_to_multi_agent_ones():
    algo = PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32).build_algo()
    try:
        with pytest.raises(ValueError, match="single-agent"):
            algo.add_module("other", RLModuleSpec())
    finally:
        algo.stop()


class BoxAndDiscreteAgents(MultiAgentEnv):
    """Agent "a" sees a Box, agent "b" a Discrete: the agents' spaces differ, so an unmapped module's cannot be
    guessed."""

    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = ["a", "b"]
        self.observation_spaces = {"a": gym.spaces.Box(-1, 1, (2,), np.float32), "b": gym.spaces.Discrete(4)}
        self.action_spaces = {"a": gym.spaces.Discrete(2), "b": gym.spaces.Discrete(3)}
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {"a": np.zeros(2, np.float32), "b": 0}, {}

    def step(self, actions):
        self.t += 1
        obs = {"a": np.full(2, self.t / 10, np.float32), "b": self.t % 4}
        return obs, {"a": 1.0, "b": 0.0}, {"__all__": self.t >= 10}, {"__all__": False}, {}


def agent_to_own(agent_id, episode, **kwargs):
    return "p_" + agent_id


def a_to_new(agent_id, episode, **kwargs):
    return "p_new" if agent_id == "a" else "p_b"


def flatten(env, spaces=None, device=None):
    return FlattenObservations(multi_agent=True)


def test_a_module_no_agent_maps_to_after_add_module_comes_back_from_a_checkpoint(tmp_path):
    """p_a's spaces came from agent "a"; after add_module maps "a" to p_new, the checkpoint's config must still
    say them (it said none: from_checkpoint failed with 'No agent maps to module p_a')."""
    env = BoxAndDiscreteAgents()
    algo = (PPOConfig().environment(BoxAndDiscreteAgents)
            .env_runners(num_envs_per_env_runner=1, env_to_module_connector=flatten)
            .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .multi_agent(policies={"p_a", "p_b"}, policy_mapping_fn=agent_to_own).debugging(seed=0)).build_algo()
    algo.train()
    algo.add_module("p_new", RLModuleSpec(observation_space=env.observation_spaces["a"],
                                          action_space=env.action_spaces["a"]), new_agent_to_module_mapping_fn=a_to_new)
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    kept = weights(algo.get_module("p_a"))
    algo.stop()
    fresh = PPO.from_checkpoint(path, trusted=[__name__])
    try:
        assert same(weights(fresh.get_module("p_a")), kept)
        assert fresh.train()["training_iteration"] == 2
    finally:
        fresh.stop()
