"""Benchmark: PPO on Pendulum-v1 with RLlib's tuned-example settings, to mean return >= -300 within 400k steps.

    .venv/bin/python benchmarks/ppo_pendulum.py [--seed 0] [--json benchmarks/results/ppo_pendulum.json]

RLlib's example samples with 2 EnvRunners x 20 envs; here one in-process EnvRunner steps 20 envs
(the 1024-step train batch per iteration is the same).
"""
import argparse
import json
import pathlib
import time

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
    algo = config.build_algo()
    best = float("-inf")
    try:
        while True:
            result = algo.train()
            ret = result["env_runners"]["episode_return_mean"]
            steps = result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if result["training_iteration"] % 20 == 0:
                print(f"iter={result['training_iteration']} steps={steps} return={ret:.1f} "
                      f"t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= args.stop_reward or steps >= args.stop_timesteps or \
                    result["training_iteration"] >= args.stop_iters:
                break
    finally:
        algo.stop()
    summary = {"task": "ppo_pendulum", "seed": args.seed, "solved": ret >= args.stop_reward, "return": ret,
               "best_return": best, "steps": steps, "wall_s": round(time.perf_counter() - start, 1)}
    print("RESULT " + json.dumps(summary))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
