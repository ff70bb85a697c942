"""Small recorded datasets shared by the offline tests (made once per session: an untrained policy's steps)."""
import pytest

from relayrl import PPOConfig, SACConfig


def record(config, folder, samples: int) -> str:
    """Sample `samples` times with the config's local EnvRunner, recording into `folder`; returns the folder."""
    algo = config.offline_data(output=str(folder)).debugging(seed=0, logger_config={"type": "none"}).build_algo()
    try:
        for _ in range(samples):
            algo.env_runner.sample()
    finally:
        algo.stop()
    return str(folder)


@pytest.fixture(scope="session")
def cartpole_rows(tmp_path_factory):
    """~600 CartPole-v1 transition rows (with action logits and log-probs) from an untrained PPO policy."""
    config = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
              .training(train_batch_size=200, minibatch_size=200).rl_module(model_config={"fcnet_hiddens": [8]})
              .offline_data(output_write_episodes=False))
    return record(config, tmp_path_factory.mktemp("cartpole_rows"), 3)


@pytest.fixture(scope="session")
def cartpole_episodes(tmp_path_factory):
    """The same kind of data as episode rows (RLlib's default recording format)."""
    config = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
              .training(train_batch_size=200, minibatch_size=200).rl_module(model_config={"fcnet_hiddens": [8]}))
    return record(config, tmp_path_factory.mktemp("cartpole_episodes"), 3)


@pytest.fixture(scope="session")
def pendulum_rows(tmp_path_factory):
    """~300 Pendulum-v1 transition rows from an untrained SAC policy."""
    config = (SACConfig().environment("Pendulum-v1").env_runners(rollout_fragment_length=100)
              .rl_module(model_config={"fcnet_hiddens": [8]}).offline_data(output_write_episodes=False))
    return record(config, tmp_path_factory.mktemp("pendulum_rows"), 3)
