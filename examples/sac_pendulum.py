"""SAC on Pendulum-v1 with RLlib's tuned settings (examples/algorithms/sac/pendulum_sac.py), in-process.

    python examples/sac_pendulum.py                        # stops at a mean return of -250 (about 8k steps)
    python examples/sac_pendulum.py --stop-timesteps 20000
"""
import argparse

import torch.nn as nn

from relayrl import DefaultModelConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.sac_config import RLLIB_SAC_DEFAULTS
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    add_rllib_example_script_args(parser, default_reward=-250.0, default_iters=1000, default_timesteps=20_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    args = parser.parse_args(argv)

    config = (
        SACConfig()
        .update_from_dict(RLLIB_SAC_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("Pendulum-v1")
        .training(
            initial_alpha=1.001,
            # SAC has three optimisers; `lr` stays None.
            actor_lr=2e-4,
            critic_lr=8e-4,
            alpha_lr=9e-4,
            lr=None,
            target_entropy="auto",  # -dim(A) = -1 for Pendulum
            n_step=(2, 5),  # each sampled transition uses a random n in [2, 5]
            tau=0.005,
            train_batch_size_per_learner=256,
            target_network_update_freq=1,
            replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 100000, "alpha": 1.0,
                                  "beta": 0.0},
            num_steps_sampled_before_learning_starts=256,
        )
        .rl_module(model_config=DefaultModelConfig(
            fcnet_hiddens=[256, 256],
            fcnet_activation="relu",
            fcnet_kernel_initializer=nn.init.xavier_uniform_,
            head_fcnet_hiddens=[],
            head_fcnet_activation=None,
            head_fcnet_kernel_initializer="orthogonal_",
            head_fcnet_kernel_initializer_kwargs={"gain": 0.01},
        ))
        .reporting(metrics_num_episodes_for_smoothing=5)
        .debugging(seed=args.seed)
    )
    return run_rllib_example_script_experiment(config, args)


if __name__ == "__main__":
    main()
