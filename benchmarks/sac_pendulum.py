"""Benchmark: SAC on Pendulum-v1 with RLlib's tuned-example settings, to mean return >= -250 within 20k steps.

    .venv/bin/python benchmarks/sac_pendulum.py [--seed 0] [--json benchmarks/results/sac_pendulum.json]

Same settings as RLlib's `examples/algorithms/sac/pendulum_sac.py` (one Learner): prints one JSON line
(RESULT {...}) with the env steps and wall seconds it took.
"""
import argparse
import pathlib
import time

import torch.nn as nn
from time_to_bar import report, train_to_bar

from relayrl import DefaultModelConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.sac_config import RLLIB_SAC_DEFAULTS


def rllib_pendulum_config(seed: int = 0) -> SACConfig:
    """RLlib's tuned Pendulum SAC settings (num_learners=0)."""
    return (
        SACConfig()
        .update_from_dict(RLLIB_SAC_DEFAULTS)  # RLlib's tuned example changes only what follows
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
    result, _ = train_to_bar(algo, stop_reward=args.stop_reward, stop_timesteps=args.stop_timesteps, print_every=20)
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    wall = time.perf_counter() - start
    return report({"task": "sac_pendulum", "seed": args.seed, "solved": bool(ret >= args.stop_reward),
                   "return": round(ret, 1), "steps": steps, "wall_s": round(wall, 1),
                   "build_s": round(built - start, 2), "env_steps_per_s": round(steps / wall, 1)}, args.json)

if __name__ == "__main__":
    main()
