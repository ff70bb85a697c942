"""Benchmark: DQN on CartPole-v1 to mean return >= 450 within 200k steps.

    .venv/bin/python benchmarks/dqn_cartpole.py [--settings rllib|default] [--seed 0] [--json FILE]

`--settings rllib` (the default): the same settings as RLlib's `examples/algorithms/dqn/cartpole_dqn.py`
(one Learner, no remote EnvRunners); `--settings default`: relayrl's DQN defaults, nothing tuned. Prints one
JSON line (RESULT {...}) with the env steps, wall seconds and CPU seconds it took. Peers:
/work/shared/anchors/rllib_offpolicy.py dqn and sb3_offpolicy.py dqn.
"""
import time

from time_to_bar import settings_benchmark

T0 = time.perf_counter()


def rllib_cartpole_config(seed: int = 0):
    """RLlib's tuned CartPole DQN settings (num_learners=0)."""
    from relayrl import DefaultModelConfig
    from relayrl.algorithms.dqn import DQNConfig
    from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_DEFAULTS

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


def default_config(seed: int = 0):
    """relayrl's DQN defaults: only the env and the seed are set."""
    from relayrl.algorithms.dqn import DQNConfig

    return DQNConfig().environment("CartPole-v1").debugging(seed=seed, logger_config={"type": "none"})


CONFIGS = {"rllib": rllib_cartpole_config, "default": default_config}


def main(argv=None):
    return settings_benchmark("dqn_cartpole", CONFIGS, t0=T0, stop_reward=450.0, stop_timesteps=200_000, argv=argv,
                              doc=__doc__, extra=lambda result: {
                                  "env_steps_trained": result["num_env_steps_trained_lifetime"]})


if __name__ == "__main__":
    main()
