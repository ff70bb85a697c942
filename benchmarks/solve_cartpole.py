"""One PPO CartPole-v1 run to mean return >= 450 with relayrl's defaults, timed from interpreter start.

Run as a subprocess (benchmarks/figures.py does); prints one `RESULT {json}` line.
"""
import json
import sys
import time

T0 = time.perf_counter()


def main(seed: int = 0, stop_reward: float = 450.0, stop_timesteps: int = 300_000) -> None:
    from relayrl import PPOConfig

    t_import = time.perf_counter()
    algo = PPOConfig().environment("CartPole-v1").debugging(seed=seed).build_algo()
    t_built = time.perf_counter()
    while True:
        result = algo.train()
        ret = result["env_runners"]["episode_return_mean"]
        steps = result["num_env_steps_sampled_lifetime"]
        if ret >= stop_reward or steps >= stop_timesteps:
            break
    t_end = time.perf_counter()
    algo.stop()
    print("RESULT " + json.dumps({
        "solved": ret >= stop_reward, "steps": steps, "return": ret, "iterations": result["training_iteration"],
        "import_s": t_import - T0, "build_s": t_built - t_import, "train_s": t_end - t_built, "total_s": t_end - T0,
    }))


if __name__ == "__main__":
    main(seed=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
