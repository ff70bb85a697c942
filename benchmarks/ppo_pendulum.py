"""Benchmark: PPO on Pendulum-v1 with RLlib's tuned-example settings, to mean return >= -300 within 400k steps.

    .venv/bin/python benchmarks/ppo_pendulum.py [--seed 0] [--json benchmarks/results/ppo_pendulum.json]

RLlib's example samples with 2 EnvRunners x 20 envs; here one in-process EnvRunner steps 20 envs
(the 1024-step train batch per iteration is the same).
"""
import argparse
import pathlib
import time

from time_to_bar import report, train_to_bar

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.algorithms.ppo.ppo_config import RLLIB_PPO_DEFAULTS
from relayrl.connectors import MeanStdFilter


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=-300.0)
    parser.add_argument("--stop-timesteps", type=int, default=400_000)
    parser.add_argument("--stop-iters", type=int, default=10_000)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    config = (
        PPOConfig()
        .update_from_dict(RLLIB_PPO_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("Pendulum-v1")
        .env_runners(num_envs_per_env_runner=20,
                     env_to_module_connector=lambda env, spaces, device: MeanStdFilter())
        .training(train_batch_size_per_learner=1024, minibatch_size=128, lr=0.0002, gamma=0.95, lambda_=0.5)
        .rl_module(model_config=DefaultModelConfig(fcnet_activation="relu"))
        .debugging(seed=args.seed)
    )
    result, best = train_to_bar(config.build_algo(), stop_reward=args.stop_reward,
                                stop_timesteps=args.stop_timesteps, stop_iters=args.stop_iters, print_every=20)
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    return report({"task": "ppo_pendulum", "seed": args.seed, "solved": ret >= args.stop_reward, "return": ret,
                   "best_return": best, "steps": steps, "wall_s": round(time.perf_counter() - start, 1)}, args.json)

if __name__ == "__main__":
    main()
