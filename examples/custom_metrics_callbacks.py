"""Callbacks and custom metrics: log the pole angle's largest |value| per CartPole episode.

`PoleAngleCallback` keeps the episode's running max of |pole angle| in `episode.custom_data`
(`on_episode_step`, called after every env step, also the last one) and logs it once the
episode is over (`on_episode_end`) with `metrics_logger.log_value(...)`. The EnvRunner's metrics
are merged into the train() result, so the value shows up as
`result["env_runners"]["pole_angle_max_abs"]` (mean over the last 100 episodes).

A second class, `TrainResultCallback`, adds a key to every train() result (`on_train_result` may
change the result in place); `make_multi_callbacks` chains both, in list order. A per-event
callable (`config.callbacks(on_episode_end=...)`) runs after the classes' methods.

    python examples/custom_metrics_callbacks.py --stop-iters 5
"""
import argparse

from relayrl import PPOConfig, RLlibCallback, make_multi_callbacks
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


class PoleAngleCallback(RLlibCallback):
    """Tracks max |pole angle| (observation index 2) per episode and logs it when the episode ends."""

    def on_episode_start(self, *, episode, **kwargs):
        episode.custom_data["pole_angles"] = []

    def on_episode_step(self, *, episode, **kwargs):
        pole_angle = float(episode.get_observations(-1)[2])
        episode.custom_data["pole_angles"].append(abs(pole_angle))

    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        metrics_logger.log_value("pole_angle_max_abs", max(episode.custom_data["pole_angles"]),
                                 reduce="mean", window=100)
        # The largest value over the last 100 episodes (a windowless "max" would be a lifetime max).
        metrics_logger.log_value("pole_angle_max_abs_max", max(episode.custom_data["pole_angles"]),
                                 reduce="max", window=100)


class TrainResultCallback(RLlibCallback):
    """Adds the episodes finished so far to each result (under env_runners) and prints the custom metrics."""

    def __init__(self):
        super().__init__()
        self.episodes_total = 0

    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs):
        self.episodes_total += result["env_runners"]["num_episodes"]
        result["env_runners"]["episodes_total"] = self.episodes_total
        env = result["env_runners"]
        print(f"  pole_angle_max_abs={env.get('pole_angle_max_abs', float('nan')):.4f} "
              f"(max {env.get('pole_angle_max_abs_max', float('nan')):.4f}) "
              f"episodes_total={self.episodes_total} long_episodes={env.get('num_long_episodes', 0)}", flush=True)


def count_long_episodes(*, episode, metrics_logger, **kwargs):
    """A per-event callable: counts episodes of 200+ steps (a lifetime sum)."""
    metrics_logger.log_value("num_long_episodes", int(episode.t >= 200), reduce="sum")


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=30, default_timesteps=200_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    return parser


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .callbacks(make_multi_callbacks([PoleAngleCallback, TrainResultCallback]),
                   on_episode_end=count_long_episodes)
        .debugging(seed=args.seed)
    )


def main(argv=None):
    args = get_parser().parse_args(argv)
    result = run_rllib_example_script_experiment(build_config(args), args)
    assert "pole_angle_max_abs" in result["env_runners"], "the custom metric is missing from the result"
    return result


if __name__ == "__main__":
    main()
