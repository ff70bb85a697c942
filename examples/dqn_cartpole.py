"""DQN on CartPole-v1 with RLlib's tuned settings (dueling, double Q, n-step 2..5, prioritized replay).

    python examples/dqn_cartpole.py --stop-reward 450 --stop-timesteps 200000
    python examples/dqn_cartpole.py --uniform-replay --n-step 3
"""
import argparse

from relayrl import DefaultModelConfig
from relayrl.algorithms.dqn import DQNConfig
from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_DEFAULTS
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=500, default_timesteps=200_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    parser.add_argument("--uniform-replay", action="store_true", help="EpisodeReplayBuffer instead of prioritized")
    parser.add_argument("--n-step", type=int, default=None, help="a fixed n-step instead of the range (2, 5)")
    args = parser.parse_args(argv)

    buffer_type = "EpisodeReplayBuffer" if args.uniform_replay else "PrioritizedEpisodeReplayBuffer"
    config = (
        DQNConfig()
        .update_from_dict(RLLIB_DQN_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("CartPole-v1")
        .training(
            lr=0.0005,
            train_batch_size_per_learner=32,
            replay_buffer_config={"type": buffer_type, "capacity": 50000, "alpha": 0.6, "beta": 0.4}
            if not args.uniform_replay else {"type": buffer_type, "capacity": 50000},
            n_step=args.n_step or (2, 5),
            double_q=True,
            dueling=True,
            epsilon=[(0, 1.0), (10000, 0.02)],
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[256], fcnet_activation="tanh",
                                                   fcnet_bias_initializer="zeros_", head_fcnet_hiddens=[256],
                                                   head_fcnet_bias_initializer="zeros_"))
        .debugging(seed=args.seed)
    )
    return run_rllib_example_script_experiment(config, args)


if __name__ == "__main__":
    main()
