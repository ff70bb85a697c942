"""Sampling speed with Box actions, side by side in one process: microseconds of CPU per env step of one EnvRunner.

Contestants per setting, torch path (`numpy_inference=False`: the module's torch forward and the torch
distribution every step, between the pipelines) against the numpy path (env/sampling/numpy_gaussian_policies.py;
since 2026-11-28 with the default pipelines skipped, `DirectNumpyActions` calling NormalizeAndClipActions itself):
- `sac 1 env`: SACConfig's defaults on Pendulum-v1 (one env, as SAC samples);
- `ppo 1 env` / `ppo 8 envs`: PPOConfig's defaults on Pendulum-v1;
- `bare env`: gymnasium's Pendulum-v1 `step()` alone (actions drawn beforehand), the floor.
The contestants take turns, `--rounds` times `--seconds` of CPU time each, so load changes on the machine hit
all of them; the table gives each one's median over rounds, in CPU microseconds per env step of this process.
Usage: python benchmarks/box_sampling.py [--rounds 5] [--seconds 2]
"""
import argparse
import json
import statistics
import time

import gymnasium as gym
import numpy as np
import torch

from relayrl import PPOConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.env.env_runner import EnvRunner

torch.set_num_threads(1)  # as in an algorithm's process (the Learner sets it): on shared cores more threads stall

SETTINGS = {
    "sac 1 env": lambda: SACConfig().environment("Pendulum-v1"),
    "ppo 1 env": lambda: PPOConfig().environment("Pendulum-v1").env_runners(num_envs_per_env_runner=1),
    "ppo 8 envs": lambda: PPOConfig().environment("Pendulum-v1").env_runners(num_envs_per_env_runner=8),
}
STEPS_PER_CALL = 200


def runner(setting: str, numpy_inference: bool) -> EnvRunner:
    config = SETTINGS[setting]().env_runners(numpy_inference=numpy_inference).debugging(seed=0)
    env_runner = EnvRunner(config=config)
    env_runner.sample(num_timesteps=STEPS_PER_CALL)  # warm up (envs reset, first batch)
    return env_runner


def us_per_step(env_runner: EnvRunner, seconds: float) -> float:
    """CPU microseconds of this process per env step (on shared, loaded cores wall time mostly measures the
    other processes)."""
    start, steps = time.process_time(), 0
    while time.process_time() - start < seconds:
        env_runner.sample(num_timesteps=STEPS_PER_CALL)
        steps += STEPS_PER_CALL
    return 1e6 * (time.process_time() - start) / steps


def bare_env_us_per_step(seconds: float) -> float:
    env = gym.make("Pendulum-v1")
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-2, 2, (STEPS_PER_CALL, 1)).astype(np.float32)
    start, steps = time.process_time(), 0
    while time.process_time() - start < seconds:
        for action in actions:
            if env.step(action)[3]:
                env.reset()
        steps += STEPS_PER_CALL
    return 1e6 * (time.process_time() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    contestants = {(setting, path): runner(setting, path == "numpy")
                   for setting in SETTINGS for path in ("torch", "numpy")}
    rounds = {key: [] for key in contestants}
    rounds["bare env"] = []
    for _ in range(args.rounds):
        for key, env_runner in contestants.items():
            rounds[key].append(us_per_step(env_runner, args.seconds))
        rounds["bare env"].append(bare_env_us_per_step(args.seconds))
    median = {key: statistics.median(values) for key, values in rounds.items()}
    print("| setting | torch path (us/step) | numpy path (us/step) | torch / numpy |\n|---|---|---|---|")
    for setting in SETTINGS:
        t, n = median[(setting, "torch")], median[(setting, "numpy")]
        print(f"| {setting} | {t:.1f} | {n:.1f} | {t / n:.2f}x |")
    print(f"| bare Pendulum-v1 step | {median['bare env']:.1f} | | |")
    print("RESULT " + json.dumps({" ".join(k) if isinstance(k, tuple) else k: round(v, 2) for k, v in median.items()}))


if __name__ == "__main__":
    main()
