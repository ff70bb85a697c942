"""IMPALA and APPO embedded: options and their errors, result keys, broadcasts, the losses, minibatches of whole
chunks, Box actions, connectors, checkpoints."""
import queue
import threading
import time

import numpy as np
import pytest
import torch

from relayrl import APPOConfig, IMPALA, IMPALAConfig
from relayrl.algorithms.appo.appo_config import RLLIB_APPO_DEFAULTS
from relayrl.algorithms.appo.circular_buffer import CircularBuffer
from relayrl.algorithms.impala.impala_config import RLLIB_IMPALA_DEFAULTS
from relayrl.algorithms.impala.impala_learner import _chunk_cuts
from relayrl.connectors import MeanStdFilter
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.ops.vtrace import vtrace_on_chunks
from relayrl.testing.compare import assert_same_tree


def small(config_cls=IMPALAConfig, env="CartPole-v1", **training):
    # SYNC named: exact step counts and bit-identical resume (the env's own vector env adds reset steps that are no
    # env steps, and its episodes restart on resume).
    return (config_cls().environment(env).env_runners(num_envs_per_env_runner=4, rollout_fragment_length=25,
                                                      gym_env_vectorize_mode="SYNC")
            .training(train_batch_size=100, **training).rl_module(model_config={"fcnet_hiddens": [16]})
            .reporting(min_sample_timesteps_per_iteration=300).debugging(seed=0, logger_config={"type": "none"}))


def make_mean_std_filter(env=None, spaces=None, device=None):
    return MeanStdFilter()


# -- options --------------------------------------------------------------------------------------
def test_rllib_option_names_and_defaults():
    config = IMPALAConfig()
    assert (config.vtrace, config.vtrace_clip_rho_threshold, config.vtrace_clip_pg_rho_threshold) == (True, 1.0, 1.0)
    assert (config.learner_queue_size, config.broadcast_interval, config.timeout_s_sampler_manager) == (3, 1, 0.0)
    assert (config.lr, config.grad_clip, config.grad_clip_by, config.rollout_fragment_length) == (
        4e-3, 40.0, "global_norm", 50)  # relayrl's lr (RLlib's 5e-4 is in RLLIB_IMPALA_DEFAULTS)
    appo = APPOConfig()
    assert (appo.clip_param, appo.use_kl_loss, appo.kl_coeff, appo.kl_target, appo.target_network_update_freq,
            appo.tau, appo.use_circular_buffer, appo.circular_buffer_num_batches,
            appo.circular_buffer_iterations_per_batch, appo.learner_queue_size) == (
        0.4, False, 1.0, 0.01, 1, 1.0, True, 4, 2, 16)  # relayrl's target update period (RLlib's: 2 and 8)
    rllib_appo = APPOConfig().update_from_dict(RLLIB_APPO_DEFAULTS)
    assert (rllib_appo.target_network_update_freq, rllib_appo.circular_buffer_num_batches, rllib_appo.lr) == (2, 8, 5e-4)
    rllib = IMPALAConfig().update_from_dict(RLLIB_IMPALA_DEFAULTS)
    assert (rllib.num_env_runners, rllib.num_learners, rllib.vf_loss_coeff, rllib.entropy_coeff, rllib.lr) == (
        2, 1, 0.5, 0.01, 5e-4)
    assert APPOConfig().update_from_dict(RLLIB_APPO_DEFAULTS).model_config["vf_share_layers"] is False
    config.training(entropy_coeff=[[0, 0.01], [100_000, 0.0]], vtrace_clip_rho_threshold=None)


@pytest.mark.parametrize("build, match", [
    (lambda: IMPALAConfig().training(vtrace_clip_rho_treshold=2.0), r"Did you mean `vtrace_clip_rho_threshold`"),
    (lambda: IMPALAConfig().update_from_dict({"learner_queue_sise": 3}), r"Did you mean `learner_queue_size`"),
    (lambda: IMPALAConfig().training(learner_queue_size=0), r"learner_queue_size must be a positive int, got 0"),
    (lambda: small().training(vtrace=False).validate(), r"IMPALA needs vtrace=True"),
    (lambda: small().training(minibatch_size=60).validate(),
     r"minibatch_size \(60\) must be a multiple of rollout_fragment_length \(25\)"),
    (lambda: IMPALAConfig().training(timeout_s_aggregator_manager=1.0), r"relayrl has no aggregator actors"),
    (lambda: APPOConfig().training(lambda_=0.95), r"no GAE lambda"),
    (lambda: small().env_runners(rollout_fragment_length="auto").validate(), r"needs an int rollout_fragment_length"),
])
def test_bad_input_gives_one_clear_error(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


# -- training ---------------------------------------------------------------------------------------
def test_train_result_keys_and_broadcasts():
    algo = small(broadcast_interval=3).build_algo()
    try:
        result = algo.train()
        learner = result["learners"][DEFAULT_MODULE_ID]
        for key in ("pi_loss", "vf_loss", "entropy", "total_loss", "curr_entropy_coeff",
                    "diff_num_grad_updates_vs_sampler_policy"):
            assert np.isfinite(learner[key]), key
        updates = result["num_env_steps_trained_lifetime"] // 100
        assert updates == 3 and result["num_env_steps_sampled_lifetime"] == 300
        assert result["num_weight_broadcasts"] == 1  # after the 3rd update (broadcast_interval=3)
        # The 3rd batch was sampled with the initial weights, two updates behind the learner.
        assert learner["diff_num_grad_updates_vs_sampler_policy"] == 2
        runner_weights = algo.env_runner.module.state_dict()
        learner_weights = algo.learner_group.get_module(DEFAULT_MODULE_ID).state_dict()
        assert all(torch.equal(runner_weights[k], learner_weights[k]) for k in runner_weights)  # just broadcast
        algo.train()  # 3 more updates: the 6th broadcasts again
        assert algo.env_runner.weights_seq_no == 6
    finally:
        algo.stop()


def test_impala_loss_is_vtrace_policy_gradient_value_and_entropy():
    algo = small(entropy_coeff=0.1, vf_loss_coeff=0.25).build_algo()
    try:
        learner = algo.learner_group._learner
        from relayrl.algorithms.impala.async_sampling import sample_train_batch

        batch, _, _, _ = sample_train_batch(algo.env_runner)
        tensors = learner._as_module_batch(batch)[DEFAULT_MODULE_ID]
        module = learner.module[DEFAULT_MODULE_ID]
        fwd_out = module.forward_train(tensors)
        loss = learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=algo.config, batch=tensors,
                                               fwd_out=fwd_out)
        dist = module.get_train_action_dist_cls().from_logits(fwd_out["action_dist_inputs"])
        logp, values = dist.logp(tensors["actions"]), module.compute_values(tensors)
        mask = tensors["loss_mask"].bool()
        vs, adv = vtrace_on_chunks(tensors["action_logp"], logp, tensors["rewards"], values, tensors["terminateds"],
                                   mask, gamma=algo.config.gamma)
        expected = (-(logp * adv)[mask].mean() + 0.25 * (0.5 * (values - vs) ** 2)[mask].mean()
                    - 0.1 * dist.entropy()[mask].mean())
        assert torch.allclose(loss, expected, rtol=1e-5, atol=1e-6)
        assert not bool(mask.all()), "the batch keeps the chunks' bootstrap rows"
    finally:
        algo.stop()


def test_minibatches_hold_whole_chunks():
    mask = torch.tensor([1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0], dtype=torch.bool)
    cuts = _chunk_cuts(mask, 4)
    assert cuts == [0, 7, 14]  # each cut right after an artificial (False) row, at or past a multiple of 4
    algo = small(minibatch_size=50).build_algo()
    try:
        seen = []
        learner = algo.learner_group._learner
        original = learner._update
        learner._update = lambda minibatch: (seen.append(minibatch[DEFAULT_MODULE_ID]["loss_mask"]),
                                             original(minibatch))[1]
        algo.train()
        assert len(seen) > 3 and all(not bool(m[-1]) for m in seen)  # every minibatch ends a chunk
    finally:
        algo.stop()


def test_appo_trains_box_actions_with_kl_and_target_updates():
    config = small(APPOConfig, env="Pendulum-v1", use_kl_loss=True, target_network_update_freq=1,
                   circular_buffer_num_batches=2, circular_buffer_iterations_per_batch=2)
    algo = config.build_algo()
    try:
        result = algo.train()
        learner = result["learners"][DEFAULT_MODULE_ID]
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "curr_kl_coeff", "mean_IS", "var_IS"):
            assert np.isfinite(learner[key]), key
        # 3 batches, each trained on twice (circular buffer); the target moves every 1*2*2*100 trained steps.
        assert result["num_env_steps_trained_lifetime"] == 600
        assert learner["num_target_updates"] >= 1
        module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
        assert torch.equal(module._target_pi[0].weight, module.pi[0].weight) is False or learner["num_target_updates"]
    finally:
        algo.stop()


def test_circular_buffer_serves_each_batch_at_most_k_times():
    buffer = CircularBuffer(num_batches=2, iterations_per_batch=3, seed=0)
    for item in "abc":
        buffer.put(item)
    assert buffer.num_dropped == 3 and buffer.qsize() == 6  # "a" pushed out by "c"
    taken = [buffer.get() for _ in range(6)]
    assert sorted(taken) == ["b"] * 3 + ["c"] * 3 and buffer.empty()


def test_circular_buffer_get_waits_for_a_put_without_polling():
    buffer = CircularBuffer(num_batches=2, iterations_per_batch=1, seed=0)
    with pytest.raises(queue.Empty):
        buffer.get(timeout=0.05)
    threading.Timer(0.1, buffer.put, args=("a",)).start()
    start = time.monotonic()
    assert buffer.get(timeout=5.0) == "a" and time.monotonic() - start >= 0.05  # woken by the put


def test_appo_embedded_sends_weights_once_per_step_the_runner_samples_with():
    # Two updates per batch (circular buffer), broadcast_interval=1: the broadcast after the first update
    # would be overwritten before the runner samples again, so only the second one is sent.
    algo = small(APPOConfig, circular_buffer_iterations_per_batch=2).build_algo()
    try:
        result = algo.train()
        updates = result["num_env_steps_trained_lifetime"] // 100
        assert updates == 6 and result["num_weight_broadcasts"] == 3
        runner_weights = algo.env_runner.module.state_dict()
        learner_weights = algo.learner_group.get_module(DEFAULT_MODULE_ID).state_dict()
        assert all(torch.equal(runner_weights[k], learner_weights[k]) for k in runner_weights)
        assert algo.env_runner.weights_seq_no == 6
    finally:
        algo.stop()


def test_mean_std_filter_and_evaluation():
    config = (small().env_runners(env_to_module_connector=make_mean_std_filter)
              .evaluation(evaluation_interval=1, evaluation_duration=2))
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] == 2
        stats = algo.env_runner.get_state(components="env_to_module_connector")["env_to_module_connector"]
        assert stats["MeanStdFilter"]["stat"]["count"] > 0
    finally:
        algo.stop()


@pytest.mark.parametrize("config_cls", [IMPALAConfig, APPOConfig])
def test_checkpoint_resume_is_bit_identical(config_cls, tmp_path):
    algo = small(config_cls).build_algo()
    try:
        algo.train()
        path = algo.save(str(tmp_path / "ckpt")).checkpoint.path
        after = [algo.train() for _ in range(2)]
        weights = {k: v.clone() for k, v in algo.learner_group.get_module(DEFAULT_MODULE_ID).state_dict().items()}
    finally:
        algo.stop()
    restored = IMPALA.from_checkpoint(path)
    try:
        again = [restored.train() for _ in range(2)]
        assert type(restored).__name__ == config_cls.__name__.replace("Config", "")
        restored_weights = restored.learner_group.get_module(DEFAULT_MODULE_ID).state_dict()
        assert all(torch.equal(weights[k], restored_weights[k]) for k in weights)
        for a, b in zip(after, again):
            assert a["num_env_steps_trained_lifetime"] == b["num_env_steps_trained_lifetime"]
            assert_same_tree(a["env_runners"]["episode_return_mean"], b["env_runners"]["episode_return_mean"])
    finally:
        restored.stop()


def test_reset_config_changes_vtrace_and_loss_options_in_place():
    algo = small(APPOConfig).build_algo()
    try:
        algo.train()
        learner = algo.learner_group._learner
        assert algo.reset_config({"lr": 1e-4, "vtrace_clip_rho_threshold": 2.0, "entropy_coeff": 0.02,
                                  "clip_param": 0.2, "kl_coeff": 0.5})
        assert learner.config.vtrace_clip_rho_threshold == 2.0 and learner._entropy_coeff == 0.02
        assert learner.curr_kl_coeffs[DEFAULT_MODULE_ID] == 0.5
        assert [g["lr"] for g in learner.get_optimizer().param_groups] == [1e-4]
        assert not algo.reset_config({"circular_buffer_num_batches": 8})  # needs a rebuild
        algo.train()
    finally:
        algo.stop()


def test_cli_trains_impala(capsys):
    from relayrl.cli import main

    code = main(["train", "IMPALA", "--env", "CartPole-v1", "--num-envs-per-env-runner", "4",
                 "--rollout-fragment-length", "25", "--train-batch-size", "100", "--stop-iters", "1",
                 "--min-sample-timesteps-per-iteration", "200", "--seed", "0"])
    assert code == 0
