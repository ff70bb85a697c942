"""Plain PPO on CartPole-v1 with relayrl's defaults, in-process (no cluster).

    python examples/ppo_cartpole.py --stop-reward 450 --stop-timesteps 300000
    python examples/ppo_cartpole.py --rllib-tuned     # RLlib's defaults + its tuned CartPole example
"""
import argparse

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.algorithms.ppo.ppo_config import RLLIB_PPO_DEFAULTS
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=200,
                                  default_timesteps=300_000)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--rllib-tuned", action="store_true", help="RLlib's PPO defaults and tuned CartPole settings")
    args = parser.parse_args(argv)

    config = PPOConfig().environment("CartPole-v1")
    if args.rllib_tuned:
        config = (
            config.update_from_dict(RLLIB_PPO_DEFAULTS)
            .training(lr=0.0003, num_epochs=6, vf_loss_coeff=0.01)
            .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear",
                                                       vf_share_layers=True))
        )
    config.env_runners(num_envs_per_env_runner=args.num_envs).debugging(seed=args.seed)
    return run_rllib_example_script_experiment(config, args)

if __name__ == "__main__":
    main()
