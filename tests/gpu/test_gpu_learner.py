"""num_gpus_per_learner=1 with num_learners=0: the Learner in this process trains on cuda:0.

Marked `gpu`: these run only where torch sees CUDA (run them with `pytest -m gpu tests/learner`); the
default run on a CPU machine skips them. Each algorithm trains 3 iterations; afterwards every tensor the
Learner holds (weights, buffers, target networks, optimizer moments, SAC's temperature) is on CUDA, while
the EnvRunner's module stays on the CPU and gets the trained weights.
"""
import numpy as np
import pytest
import torch
from gpu_configs import LSTM, NEEDS_CUDA, SMALL, small_ppo

from relayrl import APPOConfig, DQNConfig, IMPALAConfig, SACConfig
from relayrl.testing import DotSideEnv, StatelessCartPole

pytestmark = NEEDS_CUDA


def _dqn(model=SMALL, **training):
    return (DQNConfig().environment("CartPole-v1").rl_module(model_config=model)
            .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32, **training))


CONFIGS = {
    "ppo": small_ppo,
    "ppo_lstm": lambda: small_ppo(StatelessCartPole, LSTM),
    "ppo_cnn": lambda: small_ppo(DotSideEnv, {}),
    "dqn": _dqn,
    "dqn_prioritized": lambda: _dqn(replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer"}),
    "dqn_lstm": lambda: _dqn(LSTM, replay_buffer_config={"type": "EpisodeReplayBuffer"}, burn_in_len=2),
    "sac": lambda: (SACConfig().environment("Pendulum-v1").rl_module(model_config=SMALL)
                    .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32)),
    "sac_prioritized": lambda: (SACConfig().environment("Pendulum-v1").rl_module(model_config=SMALL)
                                .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32,
                                          replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer"})),
    "sac_cnn": lambda: (SACConfig().environment(DotSideEnv)
                        .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32)),
    "impala": lambda: IMPALAConfig().environment("CartPole-v1").rl_module(model_config=SMALL),
    "appo": lambda: APPOConfig().environment("CartPole-v1").rl_module(model_config=SMALL),
    "impala_lstm": lambda: IMPALAConfig().environment(StatelessCartPole).rl_module(model_config=LSTM),
}


def learner_tensors(learner):
    """Every tensor a Learner trains with: module state, optimizer states, tensors it keeps per module."""
    for name, tensor in learner.module.state_dict().items():
        yield f"module/{name}", tensor
    for module_id, optimizers in learner._optimizers.items():
        for opt_name, optimizer in optimizers.items():
            for i, state in enumerate(optimizer.state.values()):
                for key, value in state.items():
                    if isinstance(value, torch.Tensor):
                        yield f"optimizer/{module_id}/{opt_name}/{i}/{key}", value
    for attribute, value in vars(learner).items():
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, torch.Tensor):
                    yield f"{attribute}/{key}", item


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_local_learner_trains_on_cuda(name):
    config = CONFIGS[name]().learners(num_gpus_per_learner=1).debugging(seed=0, logger_config={"type": "none"})
    algo = config.build_algo()
    try:
        initial = algo.env_runner.module.get_state()
        for _ in range(3):
            result = algo.train()
        learner = algo.learner_group._learner
        assert learner.device == torch.device("cuda", 0)
        tensors = dict(learner_tensors(learner))
        assert any(k.startswith("optimizer/") for k in tensors), "no optimizer state: the Learner never stepped"
        off_gpu = [k for k, t in tensors.items() if not t.is_cuda]
        assert not off_gpu, f"Learner tensors not on CUDA: {off_gpu[:10]}"
        runner_params = list(algo.env_runner.module.parameters())
        assert all(p.device.type == "cpu" for p in runner_params)  # inference stays on the runner's CPU
        synced = algo.env_runner.module.get_state()
        assert any(not np.array_equal(value, initial[key]) for key, value in synced.items()), "no weights synced"
        if not name.startswith(("impala", "appo")):  # IMPALA's learner thread may be updates ahead of the runner
            trained = learner.module["default_policy"].get_state()
            for key, value in synced.items():
                np.testing.assert_array_equal(value, trained[key], err_msg=key)
        assert np.isfinite(result["env_runners"]["episode_return_mean"])
    finally:
        algo.stop()


def test_a_gpu_learner_computes_the_cpu_learners_update():
    """One PPO iteration from the same seed: the same weights on CUDA as on the CPU, up to float rounding
    (sampling and minibatch shuffling run on the CPU in both)."""
    weights = {}
    for gpus in (0, 1):
        config = small_ppo().learners(num_gpus_per_learner=gpus).debugging(seed=3, logger_config={"type": "none"})
        algo = config.build_algo()
        try:
            algo.train()
            weights[gpus] = algo.learner_group.get_weights()["default_policy"]
        finally:
            algo.stop()
    for key, value in weights[0].items():
        np.testing.assert_allclose(weights[1][key], value, rtol=1e-4, atol=1e-5, err_msg=key)


def test_a_gpu_learner_checkpoint_restores_on_the_gpu(tmp_path):
    config = small_ppo().learners(num_gpus_per_learner=1).debugging(seed=0, logger_config={"type": "none"})
    algo = config.build_algo()
    try:
        algo.train()
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        before = algo.learner_group.get_weights()
    finally:
        algo.stop()
    restored = config.build_algo()
    try:
        restored.restore_from_path(path)
        learner = restored.learner_group._learner
        off_gpu = [k for k, t in learner_tensors(learner) if not t.is_cuda]
        assert not off_gpu, off_gpu[:10]
        after = restored.learner_group.get_weights()
        for key, value in before["default_policy"].items():
            np.testing.assert_array_equal(after["default_policy"][key], value, err_msg=key)
        restored.train()  # the restored Adam moments step on CUDA
    finally:
        restored.stop()


# -- the non-finite guards on the GPU (they read losses and gradients with one sync per minibatch there) ----------
def _reliability_tests():
    """tests/reliability/test_nonfinite_gradients.py, loaded as a module, to run its tests on CUDA."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "reliability" / "test_nonfinite_gradients.py"
    spec = importlib.util.spec_from_file_location("nonfinite_gradient_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def on_cuda(monkeypatch):
    """Every Learner built in the test trains on cuda:0 (the reliability tests build their own configs)."""
    monkeypatch.setattr("relayrl.learner.learner.learner_device", lambda config: torch.device("cuda", 0))


@pytest.mark.parametrize("name", ["PPO", "DQN", "SAC"])
def test_a_nonfinite_gradient_on_the_gpu_raises_and_changes_nothing(on_cuda, name):
    _reliability_tests().test_nonfinite_gradient_raises_and_changes_nothing(name)


def test_the_gpu_error_names_the_poisoned_parameter_under_grad_clip(on_cuda):
    _reliability_tests().test_error_names_the_poisoned_parameter_not_the_first_one_under_grad_clip()


@pytest.mark.parametrize("name", ["PPO", "SAC"])
def test_skip_mode_on_the_gpu_counts_skips_and_trains_on(on_cuda, name):
    _reliability_tests().test_skip_mode_counts_skips_and_trains_on(name)


def test_a_nan_loss_on_the_gpu_raises_before_any_step(on_cuda):
    _reliability_tests().test_a_nan_loss_raises_before_any_step(None, deferred=False)
