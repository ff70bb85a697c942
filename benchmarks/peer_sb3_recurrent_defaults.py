"""Peer: sb3-contrib's RecurrentPPO with its defaults on StatelessCartPole. Runs in the peers' venv (not relayrl's):

    OMP_NUM_THREADS=1 /work/peers/rl/bin/python benchmarks/peer_sb3_recurrent_defaults.py [--budget 500000] [--seed S]

What a user writes: `RecurrentPPO("MlpLstmPolicy", env)` on one env, nothing else set (lr 3e-4, 128 steps per
rollout, minibatches of 128, 10 epochs, gamma 0.99, lambda 0.95, LSTM 256 with its own critic LSTM, no
VecNormalize; SB3 wraps the env in Monitor and a one-env DummyVecEnv). The env and the stop rule are those of
../shared/anchors/sb3_recurrent_stateless.py (rl-zoo's settings): RLlib's StatelessCartPole class in
TimeLimit(500); stop at a mean return >= 350 over the last 100 episodes (Monitor's raw returns), at `--budget` env
steps, or after ANCHOR_MAX_S wall seconds (default 1500). Prints progress lines and a RESULT line in the anchor's
format, plus the best 100-episode mean seen.
"""
import argparse
import os
import time

import numpy as np
from gymnasium.wrappers import TimeLimit
from ray.rllib.examples.envs.classes.stateless_cartpole import StatelessCartPole  # the anchors' env class
from sb3_contrib import RecurrentPPO
from stable_baselines3.common.callbacks import BaseCallback

TARGET = 350.0


class StopAtTarget(BaseCallback):
    """Stops at a 100-episode mean return >= TARGET or after `max_s` wall seconds; keeps the best mean."""

    def __init__(self, max_s: float):
        super().__init__()
        self.max_s, self.start, self.last_print = max_s, time.time(), 0
        self.solved, self.best = False, float("-inf")

    def _on_step(self) -> bool:
        returns = [info["r"] for info in self.model.ep_info_buffer]  # the last 100 episodes (stats_window_size)
        mean = float(np.mean(returns)) if returns else float("nan")
        if len(returns) >= 100:
            self.best = max(self.best, mean)
        if self.num_timesteps - self.last_print >= 10240:
            self.last_print = self.num_timesteps
            print(f"steps={self.num_timesteps} ret={mean:.1f} t={time.time() - self.start:.1f}s", flush=True)
        if len(returns) >= 100 and mean >= TARGET:
            self.solved = True
            return False
        return time.time() - self.start < self.max_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=None, help="unseeded by default, as the rl-zoo anchor")
    args = parser.parse_args()
    start = time.time()
    model = RecurrentPPO("MlpLstmPolicy", TimeLimit(StatelessCartPole(), max_episode_steps=500), seed=args.seed)
    stop = StopAtTarget(float(os.environ.get("ANCHOR_MAX_S", 1500)))
    built = time.time()
    model.learn(total_timesteps=args.budget, callback=stop)
    train_s = time.time() - built
    steps = model.num_timesteps
    print(f"RESULT sb3_recurrent_ppo_defaults solved={stop.solved} steps={steps} best={stop.best:.1f} "
          f"train_s={train_s:.1f} build_s={built - start:.1f} sps={steps / train_s:.0f}", flush=True)


if __name__ == "__main__":
    main()
