"""config.framework(torch_compile_learner=True): the Learner's training pass compiled with torch.compile (RLlib's
option names). The compiled pass must do the same math as the eager one: seeded runs end with the same weights
(up to float rounding), and checkpoints and weight syncs see the module's own parameter names."""
import os

import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.algorithms.dqn import DQNConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.learner.torch_compile import CompiledTrainPass


def _ppo(**framework):
    return (PPOConfig().environment("CartPole-v1")
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=64)
            .training(train_batch_size=128, minibatch_size=64, num_epochs=2)
            .framework(**framework).debugging(seed=0, logger_config={"type": "none"}))


def _dqn(**framework):
    return (DQNConfig().environment("CartPole-v1")
            .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32)
            .reporting(min_sample_timesteps_per_iteration=100)
            .framework(**framework).debugging(seed=0, logger_config={"type": "none"}))


def _losses_and_gradients(learner, train_pass, batch, state):
    """The training pass's losses and the gradients they give, from `state` on `batch`."""
    module = learner.module["default_policy"]
    module.set_state(state)
    module.zero_grad(set_to_none=True)
    _, losses = train_pass(batch)
    losses["default_policy"].backward()
    grads = {name: p.grad.clone() for name, p in module.named_parameters() if p.grad is not None}
    return float(losses["default_policy"]), grads


@pytest.mark.parametrize("what, make", [("forward_train", _ppo), ("complete_update", _dqn)],
                         ids=["ppo-forward_train", "dqn-complete_update"])
def test_the_compiled_pass_gives_the_eager_losses_and_gradients_on_the_same_batch(what, make):
    eager_algo = make().build_algo()
    compiled_algo = make(torch_compile_learner=True, torch_compile_learner_what_to_compile=what).build_algo()
    try:
        eager, compiled = eager_algo.learner_group._learner, compiled_algo.learner_group._learner
        assert not isinstance(eager._train_pass, CompiledTrainPass) and isinstance(compiled._train_pass,
                                                                                   CompiledTrainPass)
        seen, eager_pass = [], eager._train_pass

        def recording_pass(batch):  # the first batch the eager Learner trains on, and its weights then
            if not seen:
                seen.append((batch, eager.module["default_policy"].get_state()))
            return eager_pass(batch)

        eager._train_pass = recording_pass
        while not seen:
            eager_algo.train()
        batch, state = seen[0]
        eager_loss, eager_grads = _losses_and_gradients(eager, eager_pass, batch, state)
        compiled_loss, compiled_grads = _losses_and_gradients(compiled, compiled._train_pass, batch, state)
        assert compiled_loss == pytest.approx(eager_loss, rel=1e-5, abs=1e-7)
        assert compiled_grads.keys() == eager_grads.keys() and eager_grads
        assert max(float(g.abs().max()) for g in eager_grads.values()) > 0
        for name, grad in eager_grads.items():
            torch.testing.assert_close(compiled_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)
        # The module is not wrapped: its parameter names (checkpoints, weight syncs) are the eager ones.
        assert compiled.module["default_policy"].get_state().keys() == state.keys()
    finally:
        eager_algo.stop()
        compiled_algo.stop()


@pytest.mark.slow
def test_sac_trains_compiled_and_its_checkpoint_restores_into_an_eager_algorithm(tmp_path):
    config = (SACConfig().environment("Pendulum-v1").training(num_steps_sampled_before_learning_starts=64)
              .reporting(min_sample_timesteps_per_iteration=64).debugging(seed=0, logger_config={"type": "none"}))
    algo = config.copy().framework(torch_compile_learner=True,
                                   torch_compile_learner_what_to_compile="complete_update").build_algo()
    before = algo.learner_group._learner.module["default_policy"].get_state()
    for _ in range(3):
        result = algo.train()
    after = algo.learner_group._learner.module["default_policy"].get_state()
    assert all(np.isfinite(v).all() for v in after.values())
    assert max(float(np.abs(after[k] - before[k]).max()) for k in after) > 1e-4
    assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
    path = algo.save_to_path(tmp_path / "ckpt")
    algo.stop()
    eager = config.build_algo()
    eager.restore_from_path(path)
    restored = eager.learner_group._learner.module["default_policy"].get_state()
    eager.stop()
    for key in after:
        np.testing.assert_array_equal(restored[key], after[key])


def test_options_are_rllibs_and_bad_values_name_the_fix():
    config = PPOConfig().framework("torch", torch_compile_learner=True,
                                   torch_compile_learner_what_to_compile="complete_update",
                                   torch_compile_learner_dynamo_mode="max-autotune-no-cudagraphs")
    assert (config.torch_compile_learner, config.torch_compile_learner_what_to_compile,
            config.torch_compile_learner_dynamo_backend) == (True, "complete_update", "inductor")
    assert PPOConfig().torch_compile_learner is False  # off by default, as in RLlib
    with pytest.raises(ValueError, match="torch_compile_worker must be False .*torch_compile_learner=True"):
        PPOConfig().framework(torch_compile_worker=True)
    with pytest.raises(ValueError, match="torch_compile_learner_what_to_compile must be one of 'forward_train'"):
        PPOConfig().framework(torch_compile_learner_what_to_compile="everything")
    with pytest.raises(ValueError, match="torch_compile_learner_dynamo_mode must be one of"):
        PPOConfig().framework(torch_compile_learner_dynamo_mode="fast")


def test_an_unknown_backend_fails_when_the_learner_is_built_naming_the_option():
    config = _ppo(torch_compile_learner=True, torch_compile_learner_dynamo_backend="no_such_backend")
    with pytest.raises(ValueError, match="torch_compile_learner_dynamo_backend='no_such_backend' is not a "
                                         "torch.compile backend; use one of .*'inductor'"):
        config.build_algo()


def test_the_compiled_pass_leaves_torch_default_settings_alone():
    algo = _ppo(torch_compile_learner=True).build_algo()
    try:
        assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])  # the thread rule still holds
    finally:
        algo.stop()


def test_impala_compiles_forward_train_only_and_says_so(caplog):
    from relayrl.algorithms.impala import IMPALAConfig

    config = (IMPALAConfig().environment("CartPole-v1").debugging(seed=0, logger_config={"type": "none"})
              .framework(torch_compile_learner=True, torch_compile_learner_what_to_compile="complete_update"))
    with caplog.at_level("WARNING", logger="relayrl.learner.torch_compile"):
        algo = config.build_algo()
    try:
        assert "IMPALALearner's loss does not compile well" in caplog.text
        train_pass = algo.learner_group._learner._train_pass
        assert isinstance(train_pass, CompiledTrainPass) and not train_pass._complete
        result = algo.train()
        assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
    finally:
        algo.stop()


def test_a_learner_with_its_own_compute_losses_keeps_it_under_complete_update(caplog):
    from relayrl.algorithms.ppo.ppo_learner import PPOLearner

    calls = []

    class CountingLearner(PPOLearner):
        def compute_losses(self, *, fwd_out, batch):
            calls.append(1)
            return super().compute_losses(fwd_out=fwd_out, batch=batch)

    config = _ppo(torch_compile_learner=True, torch_compile_learner_what_to_compile="complete_update").learners(
        learner_class=CountingLearner)
    with caplog.at_level("WARNING", logger="relayrl.learner.torch_compile"):
        algo = config.build_algo()
    try:
        assert "CountingLearner overrides compute_losses" in caplog.text
        algo.train()
        assert calls  # the override ran: complete_update did not go around it
    finally:
        algo.stop()
