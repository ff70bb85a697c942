"""Plain PPO on CartPole-v1 with relayrl's defaults, in-process (no cluster).

    python examples/ppo_cartpole.py --stop-reward 450 --stop-timesteps 300000
    python examples/ppo_cartpole.py --rllib-tuned     # RLlib's defaults + its tuned CartPole example
"""
import argparse

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.algorithms.ppo.ppo_config import RLLIB_PPO_DEFAULTS


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stop-reward", type=float, default=450.0)
    parser.add_argument("--stop-timesteps", type=int, default=300_000)
    parser.add_argument("--stop-iters", type=int, default=200)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
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
    algo = config.build_algo()
    try:
        while True:
            result = algo.train()
            ret = result["env_runners"]["episode_return_mean"]
            steps = result["num_env_steps_sampled_lifetime"]
            print(f"iter={result['training_iteration']} steps={steps} return={ret:.1f}")
            if ret >= args.stop_reward or steps >= args.stop_timesteps \
                    or result["training_iteration"] >= args.stop_iters:
                return result
    finally:
        algo.stop()


if __name__ == "__main__":
    main()
