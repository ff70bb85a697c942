"""What every example script shares: RLlib's example flags and its stop rules, run in-process.

Same names as RLlib's `add_rllib_example_script_args` / `run_rllib_example_script_experiment`
(ray.rllib.utils.test_utils), so ported example scripts keep working; here training runs in
this process instead of through Tune.
"""
import argparse
from typing import Any, Callable, Dict, Optional


def add_rllib_example_script_args(parser: Optional[argparse.ArgumentParser] = None, default_reward: float = 100.0,
                                  default_iters: int = 200, default_timesteps: int = 100_000
                                  ) -> argparse.ArgumentParser:
    """`--stop-reward`, `--stop-iters`, `--stop-timesteps`, `--seed` (and a parser if none is given)."""
    parser = parser or argparse.ArgumentParser()
    parser.add_argument("--stop-reward", type=float, default=default_reward,
                        help="stop once env_runners/episode_return_mean reaches this")
    parser.add_argument("--stop-iters", type=int, default=default_iters, help="stop after this many train() calls")
    parser.add_argument("--stop-timesteps", type=int, default=default_timesteps,
                        help="stop after this many sampled env steps")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def should_stop(stop: Dict[str, float], result: Dict[str, Any]) -> bool:
    """RLlib's rule: stop when ANY criterion is reached; keys may be "/"-nested (`env_runners/...`)."""
    for path, threshold in stop.items():
        value = result
        for part in path.split("/"):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and value == value and value >= threshold:  # `value == value`: not NaN
            return True
    return False


def run_rllib_example_script_experiment(config, args, *, stop: Optional[Dict[str, float]] = None,
                                        success_metric: Optional[Dict[str, float]] = None,
                                        on_algorithm_built: Optional[Callable] = None) -> Dict[str, Any]:
    """Build the algorithm, train until a stop criterion holds, print one line per iteration; return the last
    result. The default stop criteria come from the example flags; `success_metric` (RLlib's argument, e.g.
    `{"evaluation/env_runners/episode_return_mean": 450}`) replaces the training-return criterion."""
    stop = stop or {
        **(success_metric or {"env_runners/episode_return_mean": args.stop_reward}),
        "num_env_steps_sampled_lifetime": args.stop_timesteps,
        "training_iteration": args.stop_iters,
    }
    algo = config.build_algo()
    try:
        if on_algorithm_built is not None:
            on_algorithm_built(algo)
        while True:
            result = algo.train()
            line = (f"iter={result['training_iteration']} steps={result['num_env_steps_sampled_lifetime']} "
                    f"return={result['env_runners']['episode_return_mean']:.2f}")
            evaluation = result.get("evaluation", {}).get("env_runners")
            if evaluation is not None:
                line += (f" eval_return={evaluation.get('episode_return_mean', float('nan')):.2f}"
                         f" eval_episodes={evaluation.get('num_episodes', 0)}")
            print(line, flush=True)
            if should_stop(stop, result):
                return result
    finally:
        algo.stop()
