"""The default CNN learns an image task (relayrl.testing.DotSideEnv: is the dot left or right? 10 steps, best return
10): PPO with its defaults reaches 9 within 150,000 env steps, DQN 8 within 60,000 (measured: 12k and 7k, seed 0),
discrete SAC 8 within 5,000 (measured: 1.1k env steps, 9 s on a calm 2-core machine, seed 0), and SAC with Box
actions on DotSideContinuousEnv 8 within 6,000 (measured: 4.2k)."""
import numpy as np
import pytest

from relayrl import DQNConfig, PPOConfig, SACConfig
from relayrl.testing import DotSideContinuousEnv, DotSideEnv
from relayrl.testing.learning import train_until


@pytest.mark.slow
def test_ppo_default_cnn_learns_the_dot_task():
    config = PPOConfig().environment(DotSideEnv).debugging(seed=0, logger_config={"type": "none"})
    ret, steps = train_until(config, 9.0, 150_000)
    assert ret >= 9.0, (ret, steps)


@pytest.mark.slow
def test_dqn_default_cnn_learns_the_dot_task():
    config = (DQNConfig().environment(DotSideEnv).env_runners(num_envs_per_env_runner=8)
              .training(num_steps_sampled_before_learning_starts=1000, epsilon=[[0, 1.0], [10_000, 0.02]])
              .debugging(seed=0, logger_config={"type": "none"}))
    ret, steps = train_until(config, 8.0, 60_000)
    assert ret >= 8.0, (ret, steps)


@pytest.mark.slow
def test_discrete_sac_default_cnn_learns_the_dot_task():
    # target_entropy: the 'auto' 0.98 * log(2) holds a 2-action policy near uniform (about 5.8 of 10 expected);
    # batch 64 with one update per 4 env steps keeps the CNN updates few on a CPU.
    config = (SACConfig().environment(DotSideEnv).env_runners(num_envs_per_env_runner=8)
              .training(num_steps_sampled_before_learning_starts=500, train_batch_size_per_learner=64,
                        training_intensity=16, target_entropy=0.1, initial_alpha=0.1)
              .reporting(metrics_num_episodes_for_smoothing=20)
              .debugging(seed=0, logger_config={"type": "none"}))
    ret, steps = train_until(config, 8.0, 5_000)
    assert ret >= 8.0, (ret, steps)


@pytest.mark.slow
def test_box_action_sac_default_cnn_learns_the_dot_task():
    """SAC's Box-action module on images: Q(s, a) = head(MLP([CNN(s), a])). The action's value signed by the
    dot's side is the reward (best return 10, random play 0). Measured with RLlib's fusion net (fusionnet_hiddens
    [256, 256], fusionnet_activation tanh; the fcnet's relu before 2026-12-04 took 1,080): 8.16 at 4,200 env steps
    (seed 0), 9.22 at 3,600 (seed 1), 8.90 at 6,960 (seed 2). On another machine of the same kind (2026-12-05, a
    new VM: float results differ by CPU) seed 0 took 7,920 env steps (8.04), seed 1 3,360 (8.31), and seed 2 did
    not get there in 12,000 (best 1.12; docs/sac.md). The budget is 12,000, 1.5x the slowest seen for seed 0."""
    config = (SACConfig().environment(DotSideContinuousEnv).env_runners(num_envs_per_env_runner=8)
              .training(num_steps_sampled_before_learning_starts=500, train_batch_size_per_learner=64,
                        training_intensity=16, initial_alpha=0.1)
              .reporting(metrics_num_episodes_for_smoothing=20)
              .debugging(seed=0, logger_config={"type": "none"}))
    ret, steps = train_until(config, 8.0, 12_000)
    assert ret >= 8.0, (ret, steps)


def test_the_continuous_dot_task_rewards_the_action_signed_by_the_side():
    env = DotSideContinuousEnv()
    obs, _ = env.reset(seed=0)
    for action in (0.5, -0.25, 3.0):
        right = bool(obs[:, 21:].any())  # the dot's side in the image the action answers
        obs, reward, terminated, truncated, _ = env.step(np.array([action], np.float32))
        expected = min(action, 1.0) * (1 if right else -1)
        assert reward == pytest.approx(expected) and not terminated and not truncated
    assert env.action_space.shape == (1,) and env.observation_space.dtype == np.uint8
