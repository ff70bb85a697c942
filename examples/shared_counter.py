"""A global counter shared by envs on several remote EnvRunners (the seed's named-actor pattern).

A named Ray actor ("global_counter") lives next to the driver. Every env, on every remote EnvRunner,
looks it up with `ray.get_actor` and increments it at each episode start, per worker_index; the
driver reads it after training. The same pattern gives envs any cluster-wide state (a shared
curriculum level, a replay of hard starts, ...).

    python examples/shared_counter.py --stop-iters 5
"""
import gymnasium as gym
import ray

from relayrl import PPOConfig
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment

COUNTER_NAME = "global_counter"


@ray.remote(num_cpus=0)
class Counter:
    """Counts events per key; one copy in the cluster, found by name."""

    def __init__(self):
        self.counts = {}

    def increment(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def get(self) -> dict:
        return dict(self.counts)


class CountedCartPole(gym.Wrapper):
    """CartPole that reports each episode start to the global counter (by EnvRunner worker_index)."""

    def __init__(self, env_config):
        super().__init__(gym.make("CartPole-v1"))
        self.key = f"worker_{env_config.worker_index}"
        self.counter = ray.get_actor(COUNTER_NAME)  # the named actor the driver created

    def reset(self, **kwargs):
        self.counter.increment.remote(self.key)  # fire and forget: no waiting in the env loop
        return super().reset(**kwargs)


def main(argv=None):
    parser = add_rllib_example_script_args(default_reward=150.0, default_iters=20, default_timesteps=100_000)
    parser.set_defaults(no_tune=True, num_env_runners=2)  # in this process; RLlib's flags, other defaults
    args = parser.parse_args(argv)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    counter = Counter.options(name=COUNTER_NAME).remote()
    config = (
        PPOConfig()
        .environment(CountedCartPole)
        # Fractional CPUs let the runners share a small machine; on a cluster give each a full CPU.
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=4, num_cpus_per_env_runner=0.5)
        .debugging(seed=args.seed)
    )
    result = run_rllib_example_script_experiment(config, args)
    counts = ray.get(counter.get.remote())
    print("episode starts per EnvRunner:", dict(sorted(counts.items())))
    expected = {f"worker_{i}" for i in range(1, args.num_env_runners + 1)}
    assert expected <= counts.keys(), f"every remote EnvRunner should have counted, got {counts}"
    return result


if __name__ == "__main__":
    main()
