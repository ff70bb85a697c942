"""A small local Ray for the Tune tests (2 CPUs, no dashboard), shared by the tests that need it."""
import pytest


@pytest.fixture(scope="session")
def ray_session():
    ray = pytest.importorskip("ray")
    # A fresh cluster: actors another test left running would hold the CPUs Tune's trials wait for.
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def tiny_ppo_config():
    """PPO on CountingEnv with tiny batches: one iteration is a few milliseconds of work."""
    from relayrl import PPOConfig
    from relayrl.testing.envs import CountingEnv

    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": 5})
            .env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0))
