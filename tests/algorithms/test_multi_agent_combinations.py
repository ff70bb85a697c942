"""Multi-agent configs mixed with the library's other features, the way users mix them: a user's own
MultiAgentEnv (agents that join and leave mid-episode, a different observation space per agent) under every
algorithm, mapping functions that read the episode (RLlib's self-play examples) or take the old stack's `worker`,
checkpoints, per-policy weights, inference, evaluation overrides and reset_config."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import Algorithm, AlgorithmConfig, APPOConfig, DQNConfig, PPOConfig, SACConfig
from relayrl.connectors import FlattenObservations, MeanStdFilter
from relayrl.env.multi_agent_env import MultiAgentEnv
from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole


class JoinAndLeave(MultiAgentEnv):
    """"a0" (Box(3,)) acts every step; "a1" (Box(5,)) joins at step 2 and is done at step 6. Reward 1 (Box actions:
    closeness to 0.5) per step; `env_config["length"]` steps."""

    def __init__(self, config=None):
        config = config or {}
        self.length, box = int(config.get("length", 10)), bool(config.get("box", False))
        self.possible_agents, self.agents = ["a0", "a1"], ["a0"]
        self.observation_spaces = {"a0": gym.spaces.Box(-1, 1, (3,), np.float32),
                                   "a1": gym.spaces.Box(-1, 1, (5,), np.float32)}
        self.action_spaces = ({a: gym.spaces.Box(-1, 1, (1,), np.float32) for a in self.possible_agents} if box
                              else {"a0": gym.spaces.Discrete(2), "a1": gym.spaces.Discrete(3)})
        super().__init__()

    def _obs(self, agent_id):
        return np.full(self.observation_spaces[agent_id].shape, self.t / self.length, np.float32)

    def reset(self, *, seed=None, options=None):
        self.t, self.agents = 0, ["a0"]
        return {"a0": self._obs("a0")}, {}

    def step(self, action_dict):
        self.t += 1
        rewards = {a: (1.0 - abs(float(np.asarray(act).reshape(-1)[0]) - 0.5)) if np.ndim(act) else float(act == 1)
                   for a, act in action_dict.items()}
        observations, terminateds = {"a0": self._obs("a0")}, {"__all__": self.t >= self.length}
        if 2 <= self.t <= 6:
            observations["a1"] = self._obs("a1")
            self.agents = ["a0", "a1"]
        if self.t == 6:
            terminateds["a1"], self.agents = True, ["a0"]
        return observations, rewards, terminateds, {"__all__": False}, {}


def by_agent(agent_id, episode, **kwargs):
    return "p" + agent_id[1]


def self_play(agent_id, episode, **kwargs):  # RLlib's self-play examples pick the learned side per episode
    return "main" if hash(episode.id_) % 2 == agent_id else "main_v0"


def old_stack_mapping(agent_id, episode, worker, **kwargs):
    return f"p{agent_id}"


def small(config, **ma):
    if isinstance(config, APPOConfig):
        config.training(train_batch_size=100)
    elif isinstance(config, PPOConfig):
        config.training(train_batch_size=200, minibatch_size=50, num_epochs=1)
    else:  # DQN, SAC
        config.training(num_steps_sampled_before_learning_starts=50, train_batch_size=32)
        config.reporting(min_sample_timesteps_per_iteration=100)
    return config.multi_agent(**(ma or dict(policies={"p0", "p1"}, policy_mapping_fn=by_agent))).debugging(seed=0)


@pytest.mark.parametrize("config_cls, box", [(PPOConfig, False), (APPOConfig, False), (DQNConfig, False),
                                             (SACConfig, True)])
def test_a_users_env_with_joining_agents_and_different_spaces_trains(config_cls, box):
    algo = small(config_cls().environment(JoinAndLeave, env_config={"length": 10, "box": box})).build_algo()
    try:
        result = algo.train()
        assert set(result["env_runners"]["module_episode_returns_mean"]) == {"p0", "p1"}
        assert {"p0", "p1"} <= set(result["learners"])
        assert algo.get_module("p1").observation_space.shape == (5,)
    finally:
        algo.stop()


@pytest.mark.parametrize("config_cls", [PPOConfig, DQNConfig])
def test_a_mapping_function_that_reads_the_episode_builds_and_trains(config_cls):
    # It is asked before sampling too (the modules' spaces): it used to get episode=None and fail on `.id_`.
    config = small(config_cls().environment(MultiAgentCartPole, env_config={"num_agents": 2}),
                   policies={"main", "main_v0"}, policy_mapping_fn=self_play, policies_to_train=["main"])
    for _ in range(3):  # the same mapping for the observation and the action spaces, every build
        algo = config.build_algo()
        algo.stop()
    algo = config.build_algo()
    try:
        result = algo.train()
        assert set(result["env_runners"]["module_episode_returns_mean"]) == {"main", "main_v0"}
        assert "main" in result["learners"] and "main_v0" not in result["learners"]
        assert algo.compute_single_action(np.zeros(4, np.float32), policy_id="main") in (0, 1)
    finally:
        algo.stop()


def test_a_mapping_function_with_the_old_stacks_worker_argument_gets_worker_none():
    algo = small(PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2}),
                 policies={"p0", "p1"}, policy_mapping_fn=old_stack_mapping).build_algo()
    try:
        assert set(algo.train()["env_runners"]["module_episode_returns_mean"]) == {"p0", "p1"}
    finally:
        algo.stop()


def test_a_mapping_function_that_fails_without_steps_is_named():
    def needs_steps(agent_id, episode, **kwargs):
        return f"p{episode.env_t_to_agent_t[agent_id][0]}"

    config = small(PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2}),
                   policies={"p0", "p1"}, policy_mapping_fn=needs_steps)
    with pytest.raises(ValueError, match=r"policy_mapping_fn\(0, episode\) raised .*no steps yet"):
        config.build_algo()


def test_checkpoint_with_per_agent_filters_restores_and_trains_on(tmp_path):
    pipeline = lambda env, spaces, device: [FlattenObservations(multi_agent=True), MeanStdFilter(multi_agent=True)]  # noqa: E731
    config = small(PPOConfig().environment(JoinAndLeave)).env_runners(env_to_module_connector=pipeline)
    algo = config.multi_agent(policies_to_train=["p0"]).build_algo()
    algo.train()
    weights = algo.get_weights()
    path = algo.save_to_path(str(tmp_path / "ck"))
    algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[JoinAndLeave, by_agent],
                                         config_overrides={"env_to_module_connector": pipeline})
    try:
        assert restored.config.policies_to_train == ["p0"]
        for module_id, module_weights in weights.items():
            for name, value in module_weights.items():
                assert np.array_equal(np.asarray(restored.get_weights([module_id])[module_id][name]), value)
        result = restored.train()
        assert result["training_iteration"] == 2 and "p1" not in result["learners"]
    finally:
        restored.stop()


def test_set_weights_of_one_policy_reaches_the_runner_and_leaves_the_other():
    algo = small(PPOConfig().environment(JoinAndLeave)).build_algo()
    try:
        p0_before = {k: v.clone() for k, v in algo.env_runner.module["p0"].state_dict().items()}
        zeros = {name: np.zeros_like(np.asarray(v)) for name, v in algo.get_weights(["p1"])["p1"].items()}
        algo.set_weights({"p1": zeros})
        assert all(float(t.abs().sum()) == 0 for t in algo.env_runner.module["p1"].state_dict().values())
        assert all(torch.equal(p0_before[k], v) for k, v in algo.env_runner.module["p0"].state_dict().items())
        with pytest.raises(ValueError, match="unknown policy_id/module_id 'nope'"):
            algo.compute_single_action(np.zeros(3, np.float32), policy_id="nope")
        assert algo.compute_single_action(np.zeros(5, np.float32), policy_id="p1", explore=False) in (0, 1, 2)
        with pytest.raises(ValueError, match=r"policy 'p0' acts for agent 'a0', whose observations have shape \(3,\); got"):
            algo.compute_single_action(np.zeros(5, np.float32), policy_id="p0")  # a1's observation
    finally:
        algo.stop()


def test_evaluation_overrides_leave_training_as_configured():
    config = small(PPOConfig().environment(JoinAndLeave)).multi_agent(policies_to_train=["p0"]).evaluation(
        evaluation_interval=1, evaluation_duration=2,
        evaluation_config=AlgorithmConfig.overrides(explore=False, policies_to_train=["p1"]))
    algo = config.build_algo()
    try:
        p1_before = {k: v.clone() for k, v in algo.learner_group.get_module("p1").state_dict().items()}
        result = algo.train()
        assert "p1" not in result["learners"]
        assert all(torch.equal(p1_before[k], v) for k, v in algo.learner_group.get_module("p1").state_dict().items())
        assert set(result["evaluation"]["env_runners"]["module_episode_returns_mean"]) == {"p0", "p1"}
    finally:
        algo.stop()


def test_reset_config_sets_every_policys_lr_and_refuses_a_new_policies_to_train():
    algo = small(PPOConfig().environment(JoinAndLeave)).training(lr=1e-3).build_algo()
    try:
        algo.train()
        new = algo.config.to_dict()
        new["lr"] = 5e-4
        assert algo.reset_config(new) is True
        learner = algo.learner_group._learner
        assert {g["lr"] for m in ("p0", "p1") for _, o in learner.get_optimizers_for_module(m)
                for g in o.param_groups} == {5e-4}
        new = algo.config.to_dict()
        new["policies_to_train"] = ["p0"]
        assert algo.reset_config(new) is False  # a rebuild (Tune restarts the trial); nothing changed
        assert set(algo.train()["learners"]) >= {"p0", "p1"}
    finally:
        algo.stop()


def test_a_league_of_snapshot_slots_declared_up_front_works(tmp_path):
    slots = ["main_v0", "main_v1"]
    config = small(PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2}),
                   policies={"main", *slots}, policies_to_train=["main"],
                   policy_mapping_fn=lambda agent_id, episode, **kw: "main" if agent_id == 0 else
                   slots[hash(episode.id_) % 2])
    algo = config.build_algo()
    try:
        algo.train()
        algo.set_weights({"main_v1": algo.get_weights(["main"])["main"]})  # a snapshot of main joins the league
        main = algo.env_runner.module["main"].state_dict()
        assert all(torch.equal(main[k], v) for k, v in algo.env_runner.module["main_v1"].state_dict().items())
        path = algo.save_to_path(str(tmp_path / "league"))
        fresh = config.build_algo()
        fresh.restore_from_path(path)
        assert all(torch.equal(main[k], v) for k, v in fresh.env_runner.module["main_v1"].state_dict().items())
        fresh.stop()
    finally:
        algo.stop()


def test_one_policys_weights_start_a_differently_named_policy_of_another_algorithm(tmp_path):
    from relayrl.checkpoints.errors import CheckpointError
    from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec

    source = small(PPOConfig().environment(JoinAndLeave)).build_algo()
    source.train()
    p0 = source.get_weights(["p0"])["p0"]
    path = source.save_to_path(str(tmp_path / "source"))
    source.stop()
    modules = f"{path}/learner_group/learner/rl_module"

    def hero_config(load_state_path):
        return small(PPOConfig().environment(JoinAndLeave), policies={"hero", "villain"},
                     policy_mapping_fn=lambda agent_id, episode, **kw: "hero" if agent_id == "a0" else "villain"
                     ).rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
                         "hero": RLModuleSpec(load_state_path=load_state_path), "villain": RLModuleSpec()}))

    from_spec = hero_config(f"{modules}/p0").build_algo()  # RLlib's flow: a spec's load_state_path
    restored = hero_config(None).build_algo()
    restored.restore_from_path(f"{modules}/p0", component="learner_group/learner/rl_module/hero")  # or a restore
    for algo in (from_spec, restored):
        try:
            runner = algo.env_runner.module["hero"].state_dict()
            assert all(np.array_equal(runner[name].numpy(), p0[name]) for name in runner)  # the runner acts with it
            assert algo.train()["training_iteration"] == 1
        finally:
            algo.stop()
    with pytest.raises(CheckpointError, match=r"holding the modules \['p0', 'p1'\], none named 'hero'"):
        hero_config(modules).build_algo()


def test_a_per_policy_config_on_an_rlmodule_policy_is_refused_not_ignored():
    from relayrl import PolicySpec

    config = small(PPOConfig().environment(JoinAndLeave), policies={"p0": PolicySpec(config={"lr": 1e-5}), "p1": None},
                   policy_mapping_fn=by_agent)
    with pytest.raises(ValueError, match=r"policies\['p0'\] = PolicySpec\(config=\{'lr': 1e-05\}\).*would be ignored"):
        config.build_algo()


def test_an_evaluation_only_heuristic_policy_beside_an_lstm_policy():
    from relayrl import PolicySpec
    from relayrl.modules.random_rl_module import RandomRLModule
    from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec

    a1 = JoinAndLeave()
    config = small(PPOConfig().environment(JoinAndLeave)).env_runners(num_envs_per_env_runner=3).rl_module(
        rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "p1": RLModuleSpec(model_config={"use_lstm": True, "lstm_cell_size": 8, "max_seq_len": 3})})
    ).evaluation(evaluation_interval=1, evaluation_duration=2, evaluation_config=AlgorithmConfig.overrides(
        explore=False,  # p0 plays a1 against a heuristic that exists in evaluation only
        policies={"p0": None, "p1": PolicySpec(observation_space=a1.observation_spaces["a1"],
                                               action_space=a1.action_spaces["a1"]), "random": None},
        policy_mapping_fn=lambda agent_id, episode, **kw: "p0" if agent_id == "a0" else "random",
        rl_module_spec=MultiRLModuleSpec(rl_module_specs={"random": RLModuleSpec(module_class=RandomRLModule)})))
    algo = config.build_algo()
    try:
        assert algo.get_module("p1").is_stateful() and not algo.get_module("p0").is_stateful()
        result = algo.train()
        assert set(result["learners"]) >= {"p0", "p1"}
        assert set(result["evaluation"]["env_runners"]["module_episode_returns_mean"]) == {"p0", "random"}
    finally:
        algo.stop()


def test_rllibs_multi_agent_example_envs_are_stored_by_name_in_checkpoints(tmp_path):
    from relayrl.examples.envs.classes.multi_agent import MultiAgentPendulum

    algo = small(PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2}),
                 policies={"p0", "p1"}, policy_mapping_fn=old_stack_mapping).build_algo()
    algo.train()
    path = algo.save_to_path(str(tmp_path / "ck"))
    algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[old_stack_mapping])  # no env=: the env class is stored
    try:
        assert restored.config.env is MultiAgentCartPole and restored.train()["training_iteration"] == 2
    finally:
        restored.stop()
    assert f"{MultiAgentPendulum.__module__}:{MultiAgentPendulum.__qualname__}" == \
        "relayrl.examples.envs.classes.multi_agent:MultiAgentPendulum"
