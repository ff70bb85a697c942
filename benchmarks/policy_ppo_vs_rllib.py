"""RLlib's old-stack PPO policy, side by side in one run: relayrl's PPOTorchPolicy vs RLlib 2.60's own.

    python benchmarks/policy_ppo_vs_rllib.py [--peers /tmp/peers/bin/python] [--repeats 1]

Both train the PPO torch policy with RLlib's old PPO training step (sample train_batch_size env steps,
standardize advantages, num_epochs passes of shuffled minibatches, sync weights, update_kl): RLlib as its PPO
algorithm with `api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)`,
relayrl as an Algorithm whose get_default_policy_class is PPOTorchPolicy and whose training_step is that step.
CartPole-v1, lr 3e-4, train batch 1000, 6 epochs of minibatches of 128, fcnet [64, 64], the old-stack PPO
defaults otherwise (lambda 1.0, clip 0.3, vf_clip 10, kl_coeff 0.2, kl_target 0.01), local sampling, seed 0;
stop at the first iteration whose mean return is >= 150 (or 200,000 env steps). Each run is a fresh process
with OMP_NUM_THREADS=1 (RAY_ADDRESS=local for RLlib); runs alternate. Reported per run: env steps to 150, the
training time from the built algorithm to 150 (wall and the process's CPU seconds), env steps/s over it, and
the wall time from process start to exit. Prints one `RESULT {json}` line per run and the ratios of the medians.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

SETTINGS = {"lr": 3e-4, "train_batch_size": 1000, "num_epochs": 6, "minibatch_size": 128}
MODEL = {"fcnet_hiddens": [64, 64]}
TARGET, BUDGET = 150, 200_000


def _train(algo, returns_of) -> None:
    """Train to TARGET; print the child's RESULT line."""
    t0, c0 = time.perf_counter(), time.process_time()
    best, steps = -1.0, 0
    while best < TARGET and steps < BUDGET:
        result = algo.train()
        ret, steps = returns_of(result)
        best = max(best, ret if ret == ret else -1.0)
    print("CHILD " + json.dumps({"best": best, "steps": steps, "train_time_s": round(time.perf_counter() - t0, 2),
                                 "train_cpu_s": round(time.process_time() - c0, 2)}), flush=True)


def relayrl_child() -> None:
    from relayrl.algorithms.algorithm import Algorithm
    from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
    from relayrl.policy.execution import (LEARNER_STATS_KEY, standardize_fields, synchronous_parallel_sample,
                                          train_one_step)

    class PPOPolicyAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return PPOTorchPolicy

        def training_step(self):  # RLlib's old PPO training_step, short
            batch = synchronous_parallel_sample(worker_set=self.workers, max_env_steps=self.config.train_batch_size)
            results = train_one_step(self, standardize_fields(batch, ["advantages"]))
            self.workers.sync_weights(global_vars={"timestep": self._counters["num_env_steps_sampled_lifetime"]})
            for pid, info in results.items():
                self.get_policy(pid).update_kl(info[LEARNER_STATS_KEY]["kl"])
            return results

    algo = PPOPolicyAlgo(config={"env": "CartPole-v1", **SETTINGS, "model": MODEL, "seed": 0,
                                 "logger_config": {"type": "none"}})
    _train(algo, lambda r: (r["env_runners"]["episode_return_mean"], r["num_env_steps_sampled_lifetime"]))
    algo.stop()


def rllib_child() -> None:
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig

    ray.init(num_cpus=2, include_dashboard=False)
    config = (PPOConfig().api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
              .environment("CartPole-v1").framework("torch").env_runners(num_env_runners=0)
              .training(**SETTINGS, model=MODEL).debugging(seed=0))
    algo = config.build()

    def returns_of(result):
        runners = result["env_runners"]
        ret = runners.get("episode_reward_mean", runners.get("episode_return_mean"))
        return ret, result.get("num_env_steps_sampled_lifetime") or result["num_env_steps_sampled"]

    _train(algo, returns_of)
    algo.stop()


def _run(library: str, python: str) -> dict:
    root = str(pathlib.Path(__file__).resolve().parents[1])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_ADDRESS": "local"}
    if library == "relayrl":
        env["PYTHONPATH"] = root
    t0 = time.perf_counter()
    proc = subprocess.run([python, str(pathlib.Path(__file__).resolve()), "--child", library], capture_output=True,
                          text=True, env=env, timeout=3600)
    wall = time.perf_counter() - t0
    line = next((l for l in proc.stdout.splitlines() if l.startswith("CHILD ")), None)
    if line is None:
        raise RuntimeError(f"{library} printed no CHILD line:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    result = {"library": library, **json.loads(line[len("CHILD "):]), "time_s": round(wall, 2)}
    result["env_steps_per_s"] = round(result["steps"] / result["train_time_s"], 1)
    return result


def _median(values: list) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peers", default="/tmp/peers/bin/python")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", choices=["relayrl", "rllib"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return relayrl_child() if args.child == "relayrl" else rllib_child()
    runs = {"relayrl": [], "rllib": []}
    for _ in range(args.repeats):
        for library, python in (("relayrl", sys.executable), ("rllib", args.peers)):
            result = _run(library, python)
            runs[library].append(result)
            print("RESULT " + json.dumps(result), flush=True)
    keys = ("steps", "env_steps_per_s", "train_time_s", "train_cpu_s", "time_s")
    ours, theirs = ({k: _median([r[k] for r in runs[lib]]) for k in keys} for lib in ("relayrl", "rllib"))
    print(f"medians of {args.repeats}: env steps to {TARGET} relayrl {ours['steps']:.0f} / "
          f"RLlib {theirs['steps']:.0f}; env steps/s {ours['env_steps_per_s'] / theirs['env_steps_per_s']:.1f}x, "
          f"training time {theirs['train_time_s'] / ours['train_time_s']:.1f}x "
          f"(CPU {theirs['train_cpu_s'] / ours['train_cpu_s']:.1f}x), "
          f"wall time from process start {theirs['time_s'] / ours['time_s']:.1f}x")


if __name__ == "__main__":
    main()
