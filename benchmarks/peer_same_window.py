"""Run a peer's off-policy anchor so that it stops on the same metric as relayrl: the mean return of the last N
episodes. Runs in the peers' virtual environment (not relayrl's):

    /tmp/peers/bin/python benchmarks/peer_same_window.py --window 100 ../shared/anchors/rllib_offpolicy.py dqn

Why: each anchor stops on its own library's reported mean return, and those differ. RLlib 2.60's
`episode_return_mean` averages only the episodes that ended in that iteration (its metrics windows are
emptied at every reduce); DQN and SAC sample a few env steps per iteration, so that is usually one episode,
and a run stops at its first episode at the bar. SB3's anchor averages the last 20 (DQN) or 5 (SAC).
relayrl averages the last `metrics_num_episodes_for_smoothing` (100 by default).

What it changes, and nothing else (the anchor's settings, loop and RESULT line stay as written):
- RLlib: every episode's return is recorded by an `on_episode_end` callback added to the config at build
  time (the anchors sample in the driver: no remote EnvRunners; an episode's earlier chunks are added), and
  `train()`'s result reports the mean of the last N recorded episodes as `env_runners/episode_return_mean`
  (NaN before N episodes), which the anchor's loop reads.
- SB3: the anchor's `Stop(20)` / `Stop(5)` window becomes `Stop(N)` (SB3 keeps the last 100 episodes).
"""
import argparse
import math
import pathlib
import runpy
import sys

RETURNS = []  # every finished episode's return, in order (RLlib)


def _mean_of_last(window: int) -> float:
    return sum(RETURNS[-window:]) / window if len(RETURNS) >= window else math.nan


def patch_rllib(window: int) -> None:
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

    def record(*, episode, prev_episode_chunks=(), **kwargs):
        # an episode that spans several sample() calls ends as its last chunk; RLlib passes the earlier ones
        RETURNS.append(float(episode.get_return()) + sum(float(chunk.get_return()) for chunk in prev_episode_chunks))

    build_algo = AlgorithmConfig.build_algo

    def build_recording(self, *args, **kwargs):
        if self.num_env_runners:
            raise SystemExit("peer_same_window.py: the callback records in this process; the anchor must sample "
                             "in the driver (num_env_runners=0).")
        self.callbacks(on_episode_end=record)
        return build_algo(self, *args, **kwargs)

    AlgorithmConfig.build_algo = build_recording
    AlgorithmConfig.build = build_recording
    train = Algorithm.train

    def train_reporting(self, *args, **kwargs):
        result = train(self, *args, **kwargs)
        result.setdefault("env_runners", {})["episode_return_mean"] = _mean_of_last(window)
        return result

    Algorithm.train = train_reporting


def run_sb3(anchor: pathlib.Path, args: list, window: int) -> None:
    source = anchor.read_text()
    for old in ("cb = Stop(20)", "cb = Stop(5)"):
        source = source.replace(old, f"cb = Stop({window})")
    if f"cb = Stop({window})" not in source:
        raise SystemExit(f"peer_same_window.py: {anchor} no longer sets its window as `cb = Stop(n)`; update this script.")
    sys.argv = [str(anchor), *args]
    exec(compile(source, str(anchor), "exec"), {"__name__": "__main__", "__file__": str(anchor)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("anchor", type=pathlib.Path)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args()
    if ns.window < 1:
        parser.error("--window must be at least 1")
    if ns.anchor.name.startswith("sb3_"):
        return run_sb3(ns.anchor, ns.args, ns.window)
    if not ns.anchor.name.startswith("rllib_"):
        parser.error(f"{ns.anchor.name}: expected an rllib_*.py or sb3_*.py anchor")
    patch_rllib(ns.window)
    sys.argv = [str(ns.anchor), *ns.args]
    runpy.run_path(str(ns.anchor), run_name="__main__")


if __name__ == "__main__":
    main()
