"""Benchmark: SAC on Pendulum-v1 to mean return >= -250 within 20k steps.

    .venv/bin/python benchmarks/sac_pendulum.py [--settings rllib|default] [--seed 0] [--json FILE]

`--settings rllib` (the default): the same settings as RLlib's `examples/algorithms/sac/pendulum_sac.py`
(one Learner); `--settings default`: relayrl's SAC defaults, nothing tuned but the smoothing window (the
mean of the last 10 episodes, as the defaults test). Prints one JSON line
(RESULT {...}) with the env steps and wall seconds it took.
"""
import argparse
import pathlib
import time

import torch
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


def default_config(seed: int = 0) -> SACConfig:
    """relayrl's SAC defaults; the return is the mean of the last 10 episodes (the default window of 100
    Pendulum episodes would be the whole 20k-step run, random first episodes included)."""
    return (SACConfig().environment("Pendulum-v1").reporting(metrics_num_episodes_for_smoothing=10)
            .debugging(seed=seed, logger_config={"type": "none"}))


CONFIGS = {"rllib": rllib_pendulum_config, "default": default_config}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--settings", choices=tuple(CONFIGS), default="rllib")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=-250.0)
    parser.add_argument("--stop-timesteps", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=None,
                        help="the mean return over the last N episodes (default: the settings' own)")
    parser.add_argument("--learner-cpus", type=int, default=None,
                        help="num_cpus_per_learner: the Learner's torch threads (default: relayrl's, one)")
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    config = CONFIGS[args.settings](args.seed)
    if args.window is not None:
        config = config.reporting(metrics_num_episodes_for_smoothing=args.window)
    if args.learner_cpus is not None:
        config = config.learners(num_cpus_per_learner=args.learner_cpus)
    algo = config.build_algo()
    built = time.perf_counter()
    result, _ = train_to_bar(algo, stop_reward=args.stop_reward, stop_timesteps=args.stop_timesteps, print_every=20)
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    wall = time.perf_counter() - start
    return report({"task": "sac_pendulum", "settings": args.settings, "seed": args.seed, "solved": bool(ret >= args.stop_reward),
                   "window": config.metrics_num_episodes_for_smoothing,
                   "learner_threads": torch.get_num_threads(),
                   "return": round(ret, 1), "steps": steps, "wall_s": round(wall, 1),
                   "build_s": round(built - start, 2), "env_steps_per_s": round(steps / wall, 1)}, args.json)

if __name__ == "__main__":
    main()
