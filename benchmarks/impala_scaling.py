"""How many EnvRunners one IMPALA driver and one learner can feed: an env whose step costs a fixed sleep (no CPU),
1 to 16 remote runners, the driver's and the learner's busy time per train batch measured.

    .venv/bin/python benchmarks/impala_scaling.py [--runners 1 2 4 8 16] [--step-ms 2] [--seconds 20]

Each runner steps 8 sleep-envs (a sync vector env: one vector step sleeps 8 x step-ms), so one runner
samples at most 1000 / step-ms env steps/s whatever the machine; the rest of its time and all of the
driver's and learner's are real work. Prints one line per runner count and a RESULT {json} line.
"""
import argparse
import json
import time

import gymnasium as gym
import numpy as np


class SleepEnv(gym.Env):
    """200-step episodes of random 4-float observations; each step sleeps `step_ms` (the env's "cost")."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config=None):
        self.step_s = (config or {}).get("step_ms", 2.0) / 1000
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        time.sleep(self.step_s)
        self.t += 1
        return self.observation_space.sample(), 1.0, False, self.t >= 200, {}


def measure(runners: int, step_ms: float, seconds: float) -> dict:
    from relayrl import IMPALAConfig

    config = (IMPALAConfig().environment(SleepEnv, env_config={"step_ms": step_ms})
              .env_runners(num_env_runners=runners, num_envs_per_env_runner=8, rollout_fragment_length=50,
                           num_cpus_per_env_runner=0.01)
              .training(train_batch_size=800).reporting(min_time_s_per_iteration=seconds,
                                                         min_sample_timesteps_per_iteration=0)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        algo.train()  # warm-up: actors built, queues full
        sampler, thread = algo._sampler, algo._learner_thread
        wait0, update0, updates0 = sampler.wait_s, thread.update_s, thread.num_updates
        start = time.perf_counter()
        result = algo.train()
        wall = time.perf_counter() - start
        batches = max(thread.num_updates - updates0, 1)
        driver_busy = wall - (sampler.wait_s - wait0)
        learner_busy = thread.update_s - update0
        steps = result["num_env_steps_sampled"] if "num_env_steps_sampled" in result else \
            result["env_runners"]["num_env_steps_sampled"]
        return {"runners": runners, "env_steps_per_s": round(steps / wall), "ideal_per_s": round(runners * 1000 / step_ms),
                "batches_per_s": round(batches / wall, 1), "driver_ms_per_batch": round(1000 * driver_busy / batches, 2),
                "learner_ms_per_batch": round(1000 * learner_busy / batches, 2),
                "driver_busy": round(driver_busy / wall, 3), "learner_busy": round(learner_busy / wall, 3),
                "policy_lag": round(result["learners"]["default_policy"].get(
                    "diff_num_grad_updates_vs_sampler_policy", float("nan")), 2)}
    finally:
        algo.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--step-ms", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    import ray

    ray.init(address="local", num_cpus=max(args.runners) + 2, include_dashboard=False, log_to_driver=False)
    rows = []
    for n in args.runners:
        rows.append(measure(n, args.step_ms, args.seconds))
        print(rows[-1], flush=True)
    print("RESULT " + json.dumps({"step_ms": args.step_ms, "rows": rows}))


if __name__ == "__main__":
    main()
