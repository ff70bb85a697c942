"""APPO with use_lstm=True on StatelessCartPole (TimeLimit 500): how far it gets toward RLlib's bar (a mean
return of 300 within 2,000,000 env steps). One process; prints progress and a RESULT json line.

Settings: the LSTM PPO benchmark's model (LSTM 64 on the MeanStdFilter'd observation, heads [64] relu, own
critic LSTM, sequences of 33) with APPO's defaults otherwise, 32 envs x 32 steps on the local runner.
Usage: python benchmarks/appo_lstm_stateless.py [--budget 2000000] [--max-s 600] [--seed 0]
"""
import argparse
import json
import pathlib
import sys
import time

START = time.perf_counter()
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lstm_stateless import LSTM_PPO, _mean_std_filter  # noqa: E402


def appo_config(seed: int):
    from relayrl import APPOConfig, DefaultModelConfig
    from relayrl.testing.learning import stateless_cartpole

    stateless_cartpole()  # registers StatelessCartPole-v1 (TimeLimit 500)
    return (APPOConfig().environment("StatelessCartPole-v1")
            .env_runners(env_to_module_connector=_mean_std_filter, num_envs_per_env_runner=32,
                         rollout_fragment_length=32)
            .training(lr=5e-4, gamma=0.98, vf_loss_coeff=0.5, entropy_coeff=0.0)
            .rl_module(model_config=DefaultModelConfig(**LSTM_PPO["model_config"]))
            .debugging(seed=seed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=2_000_000)
    parser.add_argument("--max-s", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    algo = appo_config(args.seed).build_algo()
    best, ret, steps = float("-inf"), float("nan"), 0
    try:
        while True:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if result["training_iteration"] % 5 == 0:
                print(f"steps={steps} return={ret:.1f} t={time.perf_counter() - START:.0f}s", flush=True)
            if ret >= 300 or steps >= args.budget or time.perf_counter() - START > args.max_s:
                break
    finally:
        algo.stop()
    print("RESULT " + json.dumps({"solved": ret >= 300, "steps": steps, "return": round(ret, 1),
                                  "best": round(best, 1), "wall_s": round(time.perf_counter() - START, 1)}))


if __name__ == "__main__":
    main()
