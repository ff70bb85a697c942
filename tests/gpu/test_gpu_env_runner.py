"""num_gpus_per_env_runner=1: the EnvRunner's module runs inference on cuda:0 (run where CUDA is).

Marked `gpu` and skipped without CUDA. Observations go to the GPU through the env-to-module pipeline,
actions come back as numpy; the numpy fast path (CPU only) steps aside. Together with a GPU Learner.
"""
import numpy as np
import pytest
from gpu_configs import LSTM, NEEDS_CUDA, SMALL, small_ppo

from relayrl import DQNConfig, IMPALAConfig, SACConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing import DotSideEnv, StatelessCartPole

pytestmark = NEEDS_CUDA


CONFIGS = {
    "ppo_cnn": lambda: small_ppo(DotSideEnv, {}),
    "ppo_lstm": lambda: small_ppo(StatelessCartPole, LSTM),
    "dqn_epsilon_greedy": lambda: (DQNConfig().environment("CartPole-v1").rl_module(model_config=SMALL)
                                   .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32)),
    "sac": lambda: (SACConfig().environment("Pendulum-v1").rl_module(model_config=SMALL)
                    .training(num_steps_sampled_before_learning_starts=64, train_batch_size=32)),
    "impala": lambda: IMPALAConfig().environment("CartPole-v1").rl_module(model_config=SMALL),
    "multi_agent_ppo": lambda: (small_ppo(make_multi_agent("CartPole-v1"))
                                .environment(env_config={"num_agents": 2})
                                .multi_agent(policies={"p0", "p1"},
                                             policy_mapping_fn=lambda agent_id, *a, **k: f"p{agent_id}")),
}


def _flat(state, prefix=""):
    """{name: array} of a module's (or multi-module's nested) weights, copied."""
    out = {}
    for key, value in state.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = np.array(value, copy=True)
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_env_runner_infers_on_cuda(name):
    config = (CONFIGS[name]().env_runners(num_gpus_per_env_runner=1).learners(num_gpus_per_learner=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        initial = _flat(algo.env_runner.module.get_state())
        for _ in range(3):
            result = algo.train()
        params = list(algo.env_runner.module.parameters())
        assert params and all(p.is_cuda for p in params)
        assert any(not np.array_equal(v, initial[k]) for k, v in _flat(algo.env_runner.module.get_state()).items())
        assert result["num_env_steps_sampled_lifetime"] > 0
        assert np.isfinite(result["env_runners"]["episode_return_mean"])
    finally:
        algo.stop()


def test_compute_single_action_with_state_on_a_gpu_runner():
    algo = (small_ppo(StatelessCartPole, LSTM).env_runners(num_gpus_per_env_runner=1)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        state = algo.get_module().get_initial_state()
        obs = np.zeros(2, np.float32)
        action, state_out, extra = algo.compute_single_action(obs, state=state, explore=False)
        assert action in (0, 1)
        assert all(np.asarray(v).shape == np.asarray(state[k]).shape for k, v in state_out.items())
    finally:
        algo.stop()
