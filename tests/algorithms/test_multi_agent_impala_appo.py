"""Multi-agent IMPALA and APPO: a V-trace loss per module, RLlib's per-module result keys, policies_to_train
leaving the other modules (and APPO's target networks) untouched, bit-identical checkpoint resume."""
import pytest
import torch

from multi_agent_checks import assert_resume_is_bit_identical, by_id, same, weights

from relayrl import APPOConfig, IMPALAConfig
from relayrl.env.multi_agent_env import make_multi_agent

MultiAgentCartPole = make_multi_agent("CartPole-v1")


def config(config_cls, **multi_agent):
    return (config_cls().environment(MultiAgentCartPole, env_config={"num_agents": 2})
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=25)
            .training(train_batch_size=200)
            .reporting(min_sample_timesteps_per_iteration=400)
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id, **multi_agent)
            .debugging(seed=3, logger_config={"type": "none"}))



@pytest.mark.parametrize("config_cls, loss_key", [(IMPALAConfig, "pi_loss"), (APPOConfig, "policy_loss")])
def test_each_module_trains_with_its_own_vtrace_loss(config_cls, loss_key):
    algo = config(config_cls).build_algo()
    before = {m: weights(algo, m) for m in ("p0", "p1")}
    result = algo.train()
    assert {"p0", "p1"} <= set(result["learners"])
    for module_id in ("p0", "p1"):
        stats = result["learners"][module_id]
        assert loss_key in stats and "vf_loss" in stats and stats["num_module_steps_trained"] > 0
        assert not same(before[module_id], weights(algo, module_id)), module_id
    runners = result["env_runners"]
    assert set(runners["module_episode_returns_mean"]) == {"p0", "p1"}
    # The runner acts with the learner's latest weights (broadcast_interval=1).
    learner_p0 = algo.learner_group.get_module("p0").state_dict()
    assert all(torch.equal(v, learner_p0[k]) for k, v in algo.env_runner.module["p0"].state_dict().items())
    algo.stop()


@pytest.mark.parametrize("config_cls", [IMPALAConfig, APPOConfig])
def test_policies_to_train_leaves_the_other_module_untouched(config_cls):
    algo = config(config_cls, policies_to_train=["p0"]).build_algo()
    before = {m: weights(algo, m) for m in ("p0", "p1")}
    result = algo.train()
    algo.train()
    assert "p1" not in result["learners"] or "vf_loss" not in result["learners"]["p1"]
    assert not same(before["p0"], weights(algo, "p0"))
    assert same(before["p1"], weights(algo, "p1"))  # APPO: its target network too (it is in the state dict)
    algo.stop()


def test_appo_keeps_a_kl_coefficient_and_target_updates_per_module():
    algo = config(APPOConfig).training(use_kl_loss=True, kl_coeff=0.3, target_network_update_freq=1,
                                       circular_buffer_num_batches=1).build_algo()
    result = [algo.train() for _ in range(2)][-1]
    learner = algo.learner_group._learner
    assert set(learner.curr_kl_coeffs) == {"p0", "p1"}
    assert all(result["learners"][m]["curr_kl_coeff"] != 0.3 for m in ("p0", "p1"))  # each adapted on its own KL
    assert all(learner.num_target_updates[m] > 0 for m in ("p0", "p1"))
    algo.stop()


def test_impala_resume_is_bit_identical(tmp_path):
    assert_resume_is_bit_identical(config(IMPALAConfig), tmp_path, env=MultiAgentCartPole, loss_key="total_loss")
