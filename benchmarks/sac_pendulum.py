"""Benchmark: SAC on Pendulum-v1 with RLlib's tuned-example settings, to mean return >= -250 within 20k steps.

    .venv/bin/python benchmarks/sac_pendulum.py [--seed 0] [--json benchmarks/results/sac_pendulum.json]

Same settings as RLlib's `examples/algorithms/sac/pendulum_sac.py` (one Learner): prints one JSON line
(RESULT {...}) with the env steps and wall seconds it took.
"""
import argparse
import json
import pathlib
import time

import torch.nn as nn

from relayrl import DefaultModelConfig
from relayrl.algorithms.sac import SACConfig


def rllib_pendulum_config(seed: int = 0) -> SACConfig:
    """RLlib's tuned Pendulum SAC settings (num_learners=0)."""
    return (
        SACConfig()
        .environment("Pendulum-v1")
        .training(initial_alpha=1.001, actor_lr=2e-4, critic_lr=8e-4, alpha_lr=9e-4, lr=None, target_entropy="auto",
                  n_step=(2, 5), tau=0.005, train_batch_size_per_learner=256, target_network_update_freq=1,
                  replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 100000, "alpha": 1.0,
                                        "beta": 0.0},
                  num_steps_sampled_before_learning_starts=256)
        .rl_module(model_config=DefaultModelConfig(
            fcnet_hiddens=[256, 256], fcnet_activation="relu", fcnet_kernel_initializer=nn.init.xavier_uniform_,
            head_fcnet_hiddens=[], head_fcnet_activation=None, head_fcnet_kernel_initializer="orthogonal_",
            head_fcnet_kernel_initializer_kwargs={"gain": 0.01}))
        .reporting(metrics_num_episodes_for_smoothing=5)
        .debugging(seed=seed)
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=-250.0)
    parser.add_argument("--stop-timesteps", type=int, default=20_000)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    algo = rllib_pendulum_config(args.seed).build_algo()
    built = time.perf_counter()
    try:
        while True:
            result = algo.train()
            ret = result["env_runners"]["episode_return_mean"]
            steps = result["num_env_steps_sampled_lifetime"]
            if result["training_iteration"] % 20 == 0:
                print(f"iter={result['training_iteration']} steps={steps} return={ret:.1f} "
                      f"t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= args.stop_reward or steps >= args.stop_timesteps:
                break
    finally:
        algo.stop()
    wall = time.perf_counter() - start
    summary = {"task": "sac_pendulum", "seed": args.seed, "solved": bool(ret >= args.stop_reward),
               "return": round(ret, 1), "steps": steps, "wall_s": round(wall, 1),
               "build_s": round(built - start, 2), "env_steps_per_s": round(steps / wall, 1)}
    print("RESULT " + json.dumps(summary))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
