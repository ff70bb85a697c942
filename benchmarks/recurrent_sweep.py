"""Seed sweeps for the recurrent defaults: env steps until a mean return, per seed, for one setting.

Each run builds PPO / APPO / DQN with `use_lstm=True` on a memory task and trains until the mean return of the
last 100 episodes reaches `--target` or `--budget` env steps are sampled; one JSON line per seed (env steps,
best mean return, CPU seconds of this process). Env steps to a threshold do not depend on the machine's load,
so sweeps can run on a busy machine (one process at a time, OMP_NUM_THREADS=1).

`--set` adds settings on top of the algorithm's defaults: a JSON object of builder groups, e.g.
  '{"training": {"minibatch_size": 256}, "env_runners": {"num_envs_per_env_runner": 16}, "model": {"max_seq_len": 32}}'
("model" goes into DefaultModelConfig(use_lstm=True, ...); "mean_std_filter": true adds the MeanStdFilter).
With no --set the run is the algorithm's defaults with only use_lstm=True: what a user gets.

Tasks: StatelessCartPole-v1 (CartPole without the velocities, TimeLimit 500; RLlib's bar 350) and
StatelessPendulum-v1 (PPO only: Pendulum without the angular velocity, bar -400 there).

Usage: python benchmarks/recurrent_sweep.py --algo PPO --seeds 0-9 [--budget 300000] [--target 350] [--set JSON]
                                            [--task StatelessCartPole-v1] [--model-dict]
"""
import argparse
import json
import time

TASKS = {"StatelessCartPole-v1": 350.0, "StatelessPendulum-v1": -400.0}


def register_tasks() -> None:
    import gymnasium as gym
    import numpy as np
    from gymnasium.wrappers import TransformObservation

    from relayrl.env.registry import register_env
    from relayrl.testing.learning import stateless_cartpole

    stateless_cartpole()  # registers StatelessCartPole-v1 (TimeLimit 500)
    angle_only = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)  # cos and sin of the angle, no angular velocity
    register_env("StatelessPendulum-v1", lambda cfg: TransformObservation(
        gym.make("Pendulum-v1"), lambda obs: obs[:2].astype(np.float32), angle_only))


def build_config(algo: str, task: str, seed: int, settings: dict, model_dict: bool):
    import relayrl
    from relayrl import DefaultModelConfig

    register_tasks()
    config = getattr(relayrl, f"{algo}Config")().environment(task).debugging(seed=seed)
    model = {"use_lstm": True, **settings.get("model", {})}
    config.rl_module(model_config=model if model_dict else DefaultModelConfig(**model))
    if settings.get("training"):
        config.training(**settings["training"])
    runners = dict(settings.get("env_runners", {}))
    if settings.get("mean_std_filter"):
        runners["env_to_module_connector"] = _mean_std_filter
    if runners:
        config.env_runners(**runners)
    return config


def _mean_std_filter(env=None, spaces=None, device=None):
    from relayrl.connectors import MeanStdFilter

    return MeanStdFilter()


def run_seed(args, seed: int, settings: dict) -> dict:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    algo = build_config(args.algo, args.task, seed, settings, args.model_dict).build_algo()
    best, ret, steps, reached_at = float("-inf"), float("nan"), 0, None
    try:
        while steps < args.budget:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            best = max(best, ret) if ret == ret else best
            if result["training_iteration"] % args.progress == 0:
                print(f"  seed {seed}: steps={steps} return={ret:.1f} cpu={time.process_time() - cpu0:.0f}s",
                      flush=True)
            if ret >= args.target:
                reached_at = steps
                break
            if args.abort_below and steps >= args.abort_below[0] and best < args.abort_below[1]:
                break  # screening: too far behind to be worth the rest of the budget
    finally:
        algo.stop()
    return {"seed": seed, "reached": reached_at is not None, "steps": reached_at if reached_at else steps,
            "best": round(best, 1), "cpu_s": round(time.process_time() - cpu0, 1),
            "wall_s": round(time.perf_counter() - wall0, 1)}


def seed_list(text: str) -> list:
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", default="PPO", choices=["PPO", "APPO", "IMPALA", "DQN"])
    parser.add_argument("--task", default="StatelessCartPole-v1", choices=sorted(TASKS))
    parser.add_argument("--seeds", default="0-2")
    parser.add_argument("--budget", type=int, default=300_000)
    parser.add_argument("--target", type=float)
    parser.add_argument("--set", default="{}", help="JSON: extra settings by builder group (see the docstring)")
    parser.add_argument("--model-dict", action="store_true", help="model_config as a dict, not DefaultModelConfig")
    parser.add_argument("--label", default="")
    parser.add_argument("--progress", type=int, default=10, help="print progress every this many iterations")
    parser.add_argument("--abort-below", type=lambda t: tuple(map(float, t.split(":"))), default=None,
                        metavar="STEPS:RETURN", help="screening: give a seed up once STEPS env steps are sampled and "
                        "its best mean return is still below RETURN")
    args = parser.parse_args()
    if args.target is None:
        args.target = TASKS[args.task]
    settings = json.loads(args.set)
    rows = []
    for seed in seed_list(args.seeds):
        row = {"label": args.label, "algo": args.algo, "task": args.task, **run_seed(args, seed, settings)}
        rows.append(row)
        print("RESULT " + json.dumps(row), flush=True)
    reached = [r["steps"] for r in rows if r["reached"]]
    print(f"SUMMARY {args.label or args.set}: {len(reached)}/{len(rows)} reached {args.target} within "
          f"{args.budget}; steps {sorted(reached)}; cpu_s {sum(r['cpu_s'] for r in rows):.0f}", flush=True)


if __name__ == "__main__":
    main()
