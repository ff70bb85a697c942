"""The loop the time-to-bar benchmarks share: train until the mean return reaches a bar or a budget
runs out, printing progress; then one `RESULT {json}` line (what benchmarks/run.py parses)."""
import json
import pathlib
import time
from typing import Any, Dict, Optional, Tuple


def train_to_bar(algo, *, stop_reward: float, stop_timesteps: int, stop_iters: Optional[int] = None,
                 print_every: int = 10, stop: bool = True) -> Tuple[Dict[str, Any], float]:
    """Train `algo` until the bar or a budget; returns (last result, best mean return). `stop`: stop `algo`
    afterwards (False: the caller stops it, e.g. after printing its RESULT line, as the peers' anchors do)."""
    start, best = time.perf_counter(), float("-inf")
    try:
        while True:
            result = algo.train()
            ret = result["env_runners"]["episode_return_mean"]
            steps = result["num_env_steps_sampled_lifetime"]
            best = max(best, ret)
            if result["training_iteration"] % print_every == 0:
                print(f"iter={result['training_iteration']} steps={steps} return={ret:.1f} "
                      f"t={time.perf_counter() - start:.0f}s", flush=True)
            if ret >= stop_reward or steps >= stop_timesteps or \
                    (stop_iters is not None and result["training_iteration"] >= stop_iters):
                return result, best
    except BaseException:
        if not stop:  # the caller will not get to stop it
            algo.stop()
        raise
    finally:
        if stop:
            algo.stop()


def report(summary: Dict[str, Any], json_path: Optional[pathlib.Path]) -> Dict[str, Any]:
    """Print the RESULT line and, if asked, write the summary as a JSON file."""
    print("RESULT " + json.dumps(summary))
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(summary, indent=2))
    return summary
