"""Sampling speed of the LSTM PPO module, side by side in one process: env steps/s of one EnvRunner.

- `lstm pipelines`: numpy_inference=False, the path every stateful module took before the fast path (the
  torch step between the connector pipelines, which read each episode's state every step);
- `lstm fast path`: the default (env/sampling/recurrent_numpy_actions.py);
- `mlp fast path`: the same config with a plain MLP (DirectNumpyActions), for reference.

Settings: benchmarks/lstm_stateless.py's (8 envs, LSTM 64, separate critic LSTM) without its MeanStdFilter
(a custom piece: with it, the pipelines run for both modules). The contestants take turns, `--rounds` times
`--seconds` of CPU time each, so load changes on the machine hit all of them; the best round of each is
reported, in env steps per CPU second of the process.
Usage: python benchmarks/lstm_sampling.py [--rounds 3] [--seconds 3]
"""
import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lstm_stateless import lstm_ppo_config  # noqa: E402

import torch  # noqa: E402

from relayrl.env.env_runner import EnvRunner  # noqa: E402

torch.set_num_threads(1)  # as in an algorithm's process (the Learner sets it): on shared cores more threads stall


def runner(use_lstm: bool, numpy_inference: bool) -> EnvRunner:
    config = lstm_ppo_config(use_lstm=use_lstm).env_runners(env_to_module_connector=None,
                                                             numpy_inference=numpy_inference)
    env_runner = EnvRunner(config=config)
    env_runner.sample(num_timesteps=256)  # warm up (envs reset, first batch)
    return env_runner


def steps_per_s(env_runner: EnvRunner, seconds: float) -> float:
    """Env steps per second of this process's CPU time (on shared, loaded cores wall time mostly measures the
    other processes)."""
    start, steps = time.process_time(), 0
    while time.process_time() - start < seconds:
        env_runner.sample(num_timesteps=256)
        steps += 256
    return steps / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    contestants = {"lstm pipelines": runner(True, False), "lstm fast path": runner(True, True),
                   "mlp fast path": runner(False, True)}
    best = {name: 0.0 for name in contestants}
    for _ in range(args.rounds):
        for name, env_runner in contestants.items():
            best[name] = max(best[name], steps_per_s(env_runner, args.seconds))
    base = best["lstm pipelines"]
    print("| sampler | env steps per CPU s | vs pipelines |\n|---|---|---|")
    for name, rate in best.items():
        print(f"| {name} | {rate:.0f} | {rate / base:.2f}x |")


if __name__ == "__main__":
    main()
