"""Scale-out on one many-core machine: env steps per second against the number of remote EnvRunners (issue 21's
goal: 14 runners at least 10x one runner where 16 cores are free).

    .venv/bin/python benchmarks/runner_scaling.py [--runners 0 1 2 4 8 14] [--algo PPO IMPALA] [--seconds 8]
                                                  [--impala-fragment 50] [--impala-train-batch 500]
                                                  [--num-gpus-per-learner 0]

CartPole-v1, 8 envs per runner, one CPU per runner (0 runners: the embedded runner in the driver).
- PPO: the sampling timer of train() (`timers/env_runner_sampling_timer`): each iteration samples a 256-step
  fragment from every env of every runner (the train batch grows with the runners, so each runner's work per
  round stays the same); the learner's time is not counted. The median of 3 iterations after a warm-up.
- IMPALA: the whole asynchronous pipeline (runners, driver, learner thread) for `--seconds`, env steps sampled
  per second of wall time; here the learner can become the limit, which the row's learner_busy shows.
Prints one line per row and a RESULT {json} line with each row's speed-up over one runner.
"""
import argparse
import json
import os
import statistics
import time

ENVS, FRAGMENT = 8, 256


def _sampled(result) -> int:
    return result["env_runners"]["num_env_steps_sampled"]


def ppo_sampling_rate(runners: int) -> dict:
    from relayrl import PPOConfig

    batch = max(runners, 1) * ENVS * FRAGMENT
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_env_runners=runners, num_envs_per_env_runner=ENVS, rollout_fragment_length=FRAGMENT,
                           num_cpus_per_env_runner=1)
              .training(train_batch_size=batch, minibatch_size=batch, num_epochs=1)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        algo.train()  # warm-up: actors started, first weights sent
        rates = []
        for _ in range(3):
            result = algo.train()
            rates.append(_sampled(result) / result["timers"]["env_runner_sampling_timer"])
        return {"algo": "PPO", "runners": runners, "env_steps_per_s": round(statistics.median(rates))}
    finally:
        algo.stop()


def impala_rate(runners: int, seconds: float, train_batch: int, fragment: int, learner_gpus: float = 0) -> dict:
    from relayrl import IMPALAConfig

    config = (IMPALAConfig().environment("CartPole-v1")
              .env_runners(num_env_runners=runners, num_envs_per_env_runner=ENVS, num_cpus_per_env_runner=1,
                           rollout_fragment_length=fragment)
              .training(train_batch_size=train_batch).learners(num_gpus_per_learner=learner_gpus)
              .reporting(min_time_s_per_iteration=seconds, min_sample_timesteps_per_iteration=0)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        algo.train()  # warm-up
        thread = getattr(algo, "_learner_thread", None)
        update0 = thread.update_s if thread is not None else 0.0
        start = time.perf_counter()
        result = algo.train()
        wall = time.perf_counter() - start
        row = {"algo": "IMPALA", "runners": runners, "env_steps_per_s": round(_sampled(result) / wall)}
        if thread is not None:
            row["learner_busy"] = round((thread.update_s - update0) / wall, 3)
        return row
    finally:
        algo.stop()


def _wait_for_free_cpus(runners: int, timeout_s: float = 60.0) -> None:
    """The last run's actors are killed asynchronously: wait until this run's runners fit, so none queues."""
    import ray

    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("CPU", 0) < runners and time.monotonic() < deadline:
        time.sleep(0.5)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2, 4, 8, 14])
    parser.add_argument("--algo", nargs="+", choices=("PPO", "IMPALA"), default=["PPO", "IMPALA"])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--impala-train-batch", type=int, default=500,
                        help="IMPALA's train batch (RLlib's default 500); larger batches cost the learner less per step")
    parser.add_argument("--impala-fragment", type=int, default=50, help="IMPALA's rollout_fragment_length (default 50)")
    parser.add_argument("--num-gpus-per-learner", type=float, default=0, help="1: IMPALA's learner on cuda:0")
    args = parser.parse_args(argv)
    import ray

    ray.init(address="local", num_cpus=max(max(args.runners) + 2, os.cpu_count() or 2), include_dashboard=False,
             log_to_driver=False)
    rows = []
    for algo in args.algo:
        for n in args.runners:
            _wait_for_free_cpus(n)
            rows.append(ppo_sampling_rate(n) if algo == "PPO" else impala_rate(n, args.seconds, args.impala_train_batch,
                                                                                args.impala_fragment,
                                                                                args.num_gpus_per_learner))
            print(rows[-1], flush=True)
    for row in rows:
        one = next((r for r in rows if r["algo"] == row["algo"] and r["runners"] == 1), None)
        if one:
            row["vs_one_runner"] = round(row["env_steps_per_s"] / one["env_steps_per_s"], 2)
    print("RESULT " + json.dumps({"cpus": os.cpu_count(), "physical_cores": _physical_cores(), "envs_per_runner": ENVS,
                                  "rows": rows}), flush=True)


def _physical_cores():
    try:
        import psutil
        return psutil.cpu_count(logical=False)
    except ImportError:
        return None


if __name__ == "__main__":
    main()
