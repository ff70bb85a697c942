"""EnvRunnerServerForExternalInference as a Ray actor (RLlib's example's default: num_env_runners=1): the
simulator connects to the actor's port (env_config['port'] + worker_index) and PPO trains from it."""
import threading

import gymnasium as gym
import numpy as np
import pytest

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.env.external import EnvRunnerServerForExternalInference, ExternalSimulator

pytestmark = pytest.mark.slow


def test_ppo_trains_from_a_simulator_connected_to_a_remote_env_runner():
    config = (PPOConfig()
              .environment(observation_space=gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
                           action_space=gym.spaces.Discrete(2), env_config={"port": 0})
              .env_runners(env_runner_cls=EnvRunnerServerForExternalInference, num_env_runners=1,
                           num_cpus_per_env_runner=0.5)
              .training(train_batch_size=256, minibatch_size=128, num_epochs=1)
              .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        (port,) = algo.env_runner_group.foreach_env_runner(lambda runner: runner.port, local_env_runner=False)
        simulator = ExternalSimulator("CartPole-v1", port=port)
        thread = threading.Thread(target=simulator.run, daemon=True)
        thread.start()
        results = [algo.train() for _ in range(2)]
        simulator.stop()
        thread.join(10)
    finally:
        algo.stop()
    assert results[-1]["num_env_steps_sampled_lifetime"] == 512 and results[-1]["num_healthy_env_runners"] == 1
    assert results[-1]["env_runners"]["num_simulator_connections_lifetime"] == 1
    assert results[-1]["env_runners"]["num_episodes"] > 0
    assert simulator.weights_seq_no >= 2 and simulator.num_env_steps_sent >= 512
