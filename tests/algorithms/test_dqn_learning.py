"""DQN learns CartPole-v1 with RLlib's tuned settings: mean return >= 450 within 200k env steps (fixed seed)."""
import pytest

from relayrl import DefaultModelConfig
from relayrl.algorithms.dqn import DQNConfig
from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_DEFAULTS

SEED = 0
STEP_BUDGET = 200_000
TARGET_RETURN = 450.0


def rllib_tuned_cartpole_config(seed):
    """RLlib's examples/algorithms/dqn/cartpole_dqn.py settings (one local Learner)."""
    return (
        DQNConfig()
        .update_from_dict(RLLIB_DQN_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("CartPole-v1")
        .training(lr=0.0005, train_batch_size_per_learner=32,
                  replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50000, "alpha": 0.6,
                                        "beta": 0.4},
                  n_step=(2, 5), double_q=True, dueling=True, epsilon=[(0, 1.0), (10000, 0.02)])
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[256], fcnet_activation="tanh",
                                                   fcnet_bias_initializer="zeros_", head_fcnet_hiddens=[256],
                                                   head_fcnet_bias_initializer="zeros_"))
        .debugging(seed=seed, logger_config={"type": "none"})
    )


@pytest.mark.slow
def test_dqn_solves_cartpole_with_rllib_tuned_settings():
    algo = rllib_tuned_cartpole_config(SEED).build_algo()
    returns = []
    try:
        while True:
            result = algo.train()
            returns.append(result["env_runners"]["episode_return_mean"])
            steps = result["num_env_steps_sampled_lifetime"]
            if returns[-1] >= TARGET_RETURN or steps >= STEP_BUDGET:
                break
    finally:
        algo.stop()
    assert returns[-1] >= TARGET_RETURN, f"mean return {returns[-1]:.1f} after {steps} env steps; history {returns}"
    assert steps <= STEP_BUDGET + 2000
