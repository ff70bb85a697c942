"""Sampling speed of gym_env_vectorize_mode SYNC vs VECTOR_ENTRY_POINT (the env's own vector env), side by side.

    .venv/bin/python benchmarks/vector_env_modes.py [--envs 64] [--windows 8] [--seconds 8] [--ppo-iters 3]

One process builds one EnvRunner per mode (PPO's default module and connectors, CartPole-v1, --envs
sub-envs, fragment --fragment steps per sub-env) and measures `EnvRunner.sample()` in interleaved
windows (SYNC, native, SYNC, native, ...), so a drift in the machine's load moves both alike. The
figure is env steps recorded in the returned episodes per second, median over windows; the ratio is
native over SYNC. For reference it also times the bare vector envs' step() with random actions, and,
with --ppo-iters N > 0, PPO's end-to-end env steps per second (N training iterations per mode after one
warm-up, modes alternating). With --trained-iters N it also samples with the policy PPO reaches after N
iterations (episodes of hundreds of steps instead of ~20: fewer episode starts and ends per step).
Prints a table and a `RESULT {json}` line.
"""
import argparse
import json
import statistics
import time

import gymnasium as gym
import numpy as np
import torch

MODES = ("SYNC", "VECTOR_ENTRY_POINT")


def _config(mode: str, envs: int, fragment: int):
    from relayrl import PPOConfig

    return (PPOConfig().environment("CartPole-v1")
            .env_runners(num_envs_per_env_runner=envs, gym_env_vectorize_mode=mode, rollout_fragment_length=fragment)
            .training(train_batch_size=envs * fragment, minibatch_size=min(512, envs * fragment))
            .debugging(seed=0, logger_config={"type": "none"}))


def _trained_weights(envs: int, fragment: int, iters: int):
    """The module weights after `iters` PPO iterations (native envs), so episodes last longer than a random policy's."""
    algo = _config("VECTOR_ENTRY_POINT", envs, fragment).training(lr=1e-3, num_epochs=6).build_algo()
    try:
        for _ in range(iters):
            result = algo.train()
        print(f"trained {iters} iterations: episode_return_mean {result['env_runners']['episode_return_mean']:.0f}")
        return algo.env_runner.module.get_state()
    finally:
        algo.stop()


def _runner_meter(mode: str, envs: int, fragment: int, weights=None):
    from relayrl.env.env_runner import EnvRunner

    runner = EnvRunner(config=_config(mode, envs, fragment))
    if weights is not None:
        runner.module.set_state(weights)
    runner.sample()  # warm-up (first reset, plan)

    def meter(seconds: float) -> float:
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            steps += sum(len(episode) for episode in runner.sample())
        return steps / (time.perf_counter() - start)
    return meter


def _raw_meter(mode: str, envs: int):
    vectorization = "vector_entry_point" if mode == "VECTOR_ENTRY_POINT" else "sync"
    env = gym.make_vec("CartPole-v1", num_envs=envs, vectorization_mode=vectorization)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, size=(1024, envs))

    def meter(seconds: float) -> float:
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for row in actions[:64]:
                env.step(row)
            steps += 64 * envs
        return steps / (time.perf_counter() - start)
    return meter


def _ppo_rates(envs: int, fragment: int, iters: int) -> dict:
    algos = {mode: _config(mode, envs, fragment).build_algo() for mode in MODES}
    rates = {mode: [] for mode in MODES}
    try:
        for algo in algos.values():
            algo.train()  # warm-up
        for _ in range(iters):
            for mode, algo in algos.items():
                before, start = algo._counters["num_env_steps_sampled_lifetime"], time.perf_counter()
                result = algo.train()
                rates[mode].append((result["num_env_steps_sampled_lifetime"] - before) / (time.perf_counter() - start))
    finally:
        for algo in algos.values():
            algo.stop()
    return {mode: statistics.median(r) for mode, r in rates.items()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--fragment", type=int, default=64, help="steps per sub-env per sample() call")
    parser.add_argument("--windows", type=int, default=8, help="measuring windows per mode (interleaved)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds per mode in all")
    parser.add_argument("--ppo-iters", type=int, default=0)
    parser.add_argument("--trained-iters", type=int, default=0,
                        help="also measure sampling with the policy after this many PPO iterations (longer episodes)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    weights = _trained_weights(args.envs, args.fragment, args.trained_iters) if args.trained_iters else None
    meters = {}
    for mode in MODES:
        meters[f"sample_{mode}"] = _runner_meter(mode, args.envs, args.fragment)
        if weights is not None:
            meters[f"sample_trained_{mode}"] = _runner_meter(mode, args.envs, args.fragment, weights)
        meters[f"raw_step_{mode}"] = _raw_meter(mode, args.envs)
    windows = {name: [] for name in meters}
    for _ in range(args.windows):
        for name, meter in meters.items():
            windows[name].append(meter(args.seconds / args.windows))
    rates = {name: statistics.median(r) for name, r in windows.items()}
    result = {"envs": args.envs, "fragment": args.fragment, **{k: round(v) for k, v in rates.items()},
              "sample_ratio": round(rates["sample_VECTOR_ENTRY_POINT"] / rates["sample_SYNC"], 2),
              "raw_step_ratio": round(rates["raw_step_VECTOR_ENTRY_POINT"] / rates["raw_step_SYNC"], 2)}
    if weights is not None:
        trained = rates["sample_trained_VECTOR_ENTRY_POINT"] / rates["sample_trained_SYNC"]
        result["sample_trained_ratio"] = round(trained, 2)
    if args.ppo_iters:
        ppo = _ppo_rates(args.envs, args.fragment, args.ppo_iters)
        result.update({f"ppo_{mode}": round(rate) for mode, rate in ppo.items()})
        result["ppo_ratio"] = round(ppo["VECTOR_ENTRY_POINT"] / ppo["SYNC"], 2)
    print(f"{'':28}{'SYNC':>12}{'VECTOR_ENTRY_POINT':>20}{'ratio':>8}")
    for what, ratio_key in (("sample", "sample_ratio"), ("sample_trained", "sample_trained_ratio"),
                            ("raw_step", "raw_step_ratio"), ("ppo", "ppo_ratio")):
        if ratio_key in result:
            print(f"{what + ' env steps/s':28}{result[what + '_SYNC']:>12}{result[what + '_VECTOR_ENTRY_POINT']:>20}"
                  f"{result[ratio_key]:>8}")
    print("RESULT " + json.dumps(result))
    return result


if __name__ == "__main__":
    main()
