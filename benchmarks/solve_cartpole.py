"""One PPO CartPole-v1 run to mean return >= 450, timed from interpreter start.

    python benchmarks/solve_cartpole.py [SEED] [--settings tuned|default]

"tuned" (the default here) is relayrl's tuned CartPole example (examples/ppo_cartpole.py TUNED), as
the peers run theirs (RLlib's tuned example, rl-zoo's settings for SB3); "default" is PPOConfig()
as it comes. Run as a subprocess (benchmarks/figures.py does); prints one `RESULT {json}` line.
"""
import argparse
import json
import pathlib
import sys
import time

T0 = time.perf_counter()
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))


def main(seed: int = 0, settings: str = "tuned", stop_reward: float = 450.0, stop_timesteps: int = 300_000) -> None:
    from ppo_cartpole import TUNED
    from relayrl import PPOConfig

    t_import = time.perf_counter()
    config = PPOConfig().environment("CartPole-v1").debugging(seed=seed)
    if settings == "tuned":
        config.update_from_dict(TUNED)
    algo = config.build_algo()
    t_built = time.perf_counter()
    sampling_s = learning_s = 0.0
    while True:
        result = algo.train()
        sampling_s += result["timers"]["env_runner_sampling_timer"]
        learning_s += result["timers"]["learner_update_timer"]
        ret = result["env_runners"]["episode_return_mean"]
        steps = result["num_env_steps_sampled_lifetime"]
        if ret >= stop_reward or steps >= stop_timesteps:
            break
    t_end, reached_at = time.perf_counter(), time.time()
    algo.stop()
    print("RESULT " + json.dumps({
        "settings": settings, "solved": ret >= stop_reward, "steps": steps, "return": ret,
        "iterations": result["training_iteration"], "import_s": t_import - T0, "build_s": t_built - t_import,
        "train_s": t_end - t_built, "sampling_s": sampling_s, "learning_s": learning_s, "total_s": t_end - T0,
        "reached_at": reached_at,
    }))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seed", type=int, nargs="?", default=0)
    parser.add_argument("--settings", choices=("tuned", "default"), default="tuned")
    args = parser.parse_args()
    main(seed=args.seed, settings=args.settings)
