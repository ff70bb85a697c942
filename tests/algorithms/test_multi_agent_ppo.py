"""Multi-agent PPO: a module per policy, each trained module updated, RLlib's result keys, a spec per
module, policies_to_train, and bit-identical checkpoint resume."""
import pytest
import torch
from multi_agent_checks import by_id, same, weights

from relayrl import Algorithm, PPOConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec
from relayrl.testing.compare import assert_same_tree

MultiAgentCartPole = make_multi_agent("CartPole-v1")


def config(**multi_agent):
    return (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
            .env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=256, minibatch_size=64, num_epochs=2)
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id, **multi_agent)
            .debugging(seed=5, logger_config={"type": "none"}))


def test_each_module_trains_and_results_use_rllibs_keys():
    algo = config().build_algo()
    before = {m: weights(algo, m) for m in ("p0", "p1")}
    result = algo.train()
    runners = result["env_runners"]
    assert set(runners["agent_episode_returns_mean"]) == {"0", "1"}
    assert set(runners["module_episode_returns_mean"]) == {"p0", "p1"}
    # The episode return sums the agents' returns.
    assert runners["episode_return_mean"] == pytest.approx(sum(runners["agent_episode_returns_mean"].values()),
                                                           rel=0.3)
    assert set(runners["num_agent_steps_sampled_lifetime"]) == {"0", "1"}
    assert {"p0", "p1"} <= set(result["learners"])
    for module_id in ("p0", "p1"):
        assert "policy_loss" in result["learners"][module_id]
        assert not same(before[module_id], weights(algo, module_id))
    # The runner acts with the learner's new weights.
    runner_module = algo.env_runner.module["p1"]
    learner_state = algo.learner_group.get_module("p1").state_dict()
    assert all(torch.equal(v, learner_state[k]) for k, v in runner_module.state_dict().items())
    algo.stop()


def test_policies_to_train_leaves_the_others_untouched():
    for to_train in (["p0"], lambda module_id, batch=None: module_id == "p0"):
        algo = config(policies_to_train=to_train).build_algo()
        before = {m: weights(algo, m) for m in ("p0", "p1")}
        algo.train()
        result = algo.train()
        assert not same(before["p0"], weights(algo, "p0"))
        assert same(before["p1"], weights(algo, "p1"))
        # Training stats only for the trained module (RLlib's results have no untrained module's learner stats).
        assert "num_module_steps_trained" in result["learners"]["p0"] and "p1" not in result["learners"]
        runner_p1 = algo.env_runner.module["p1"].state_dict()  # inference-only: no value layers
        assert runner_p1 and all(torch.equal(v, before["p1"][k]) for k, v in runner_p1.items())
        algo.stop()


def test_a_restored_run_training_fewer_policies_reports_no_stats_for_the_frozen_one(tmp_path):
    """The frozen policy's last losses (from the checkpoint's metrics) were reported again at every iteration."""
    algo = config().build_algo()
    algo.train()
    assert {"p0", "p1"} <= set(algo.train()["learners"])
    path = algo.save_to_path(tmp_path / "both")
    algo.stop()
    restored = [Algorithm.from_checkpoint(path, config_overrides={"policies_to_train": ["p0"], "env": MultiAgentCartPole,
                                                                  "policy_mapping_fn": by_id}),
                config(policies_to_train=["p0"]).build_algo()]
    restored[1].restore_from_path(path)
    never_trained = config(policies_to_train=["p0"]).build_algo()  # the same as a run that never trained p1
    for algo in restored + [never_trained]:
        try:
            before = weights(algo, "p1")
            for _ in range(2):
                learners = algo.train()["learners"]
                assert "policy_loss" in learners["p0"] and "p1" not in learners
            assert same(before, weights(algo, "p1"))
        finally:
            algo.stop()


def test_a_spec_per_module():
    spec = MultiRLModuleSpec(rl_module_specs={"p0": RLModuleSpec(model_config={"fcnet_hiddens": [16]}),
                                              "p1": RLModuleSpec(model_config={"fcnet_hiddens": [8, 8]})})
    algo = config().rl_module(rl_module_spec=spec).build_algo()
    p0, p1 = algo.learner_group.get_module("p0"), algo.learner_group.get_module("p1")
    assert p0.encoder[0].out_features == 16 and p1.encoder[0].out_features == 8
    assert algo.env_runner.module["p1"].encoder[0].out_features == 8
    algo.train()
    algo.stop()


def test_a_spec_for_an_unknown_module_is_named():
    """A module no policy maps to (e.g. a shared encoder) is built from its own spec, so it needs its class and
    spaces; without them (a misspelt policy id, say) the error names it."""
    spec = MultiRLModuleSpec(rl_module_specs={"p7": RLModuleSpec(model_config={"fcnet_hiddens": [16]})})
    with pytest.raises(ValueError, match="`p7`, which is not among the policies"):
        config().rl_module(rl_module_spec=spec).build_algo()


def test_resume_is_bit_identical(tmp_path):
    algo = config().build_algo()
    algo.train()
    path = algo.save_to_path(tmp_path / "ckpt")
    r1 = [algo.train() for _ in range(2)]
    restored = Algorithm.from_checkpoint(path, config_overrides={"policy_mapping_fn": by_id, "env": MultiAgentCartPole})
    r2 = [restored.train() for _ in range(2)]
    for module_id in ("p0", "p1"):
        assert same(weights(algo, module_id), weights(restored, module_id)), module_id
    opt1 = algo.learner_group._learner.get_state(components="optimizer")["optimizer"]
    opt2 = restored.learner_group._learner.get_state(components="optimizer")["optimizer"]
    assert_same_tree(opt1, opt2, "optimizer")
    for a, b in zip(r1, r2):
        assert a["num_env_steps_sampled_lifetime"] == b["num_env_steps_sampled_lifetime"]
        assert a["env_runners"]["module_episode_returns_mean"] == b["env_runners"]["module_episode_returns_mean"]
        assert a["learners"]["p1"]["total_loss"] == b["learners"]["p1"]["total_loss"]
    algo.stop()
    restored.stop()
