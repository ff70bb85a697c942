"""Benchmark: PPO with two policies (p0, p1) on two-agent CartPole to a summed mean return of 900 (450 per
agent) within 400k env steps: RLlib's multi-agent bar.

    .venv/bin/python benchmarks/multi_agent_cartpole.py [--settings rllib|default|tuned] [--seed 0] [--json FILE]

`--settings rllib` (the default): RLlib's tuned example (rllib/examples/algorithms/ppo/multi_agent_cartpole_ppo.py,
RLlib's PPO defaults plus its changes); `default`: relayrl's PPO defaults, nothing tuned; `tuned`: relayrl's
tuned single-agent CartPole example (docs/ppo.md) applied to each policy. Prints one JSON line (RESULT {...}) with
the env steps, wall seconds from process start and CPU seconds. Peer: /work/shared/anchors/rllib_ma_cartpole.py.
"""
import time

from time_to_bar import settings_benchmark

T0 = time.perf_counter()


def _two_agent_cartpole(config, seed: int):
    from relayrl.env.multi_agent_env import make_multi_agent

    return (config.environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 2})
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
            .debugging(seed=seed, logger_config={"type": "none"}))


def rllib_config(seed: int = 0):
    """RLlib's tuned two-agent CartPole settings (its PPO defaults plus the example's changes)."""
    from relayrl import DefaultModelConfig, PPOConfig
    from relayrl.algorithms.ppo.ppo_config import RLLIB_PPO_DEFAULTS

    config = (PPOConfig().update_from_dict(RLLIB_PPO_DEFAULTS)
              .env_runners(num_envs_per_env_runner=2)
              .training(lr=0.0003, num_epochs=6, vf_loss_coeff=0.01)
              .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear",
                                                         vf_share_layers=True)))
    return _two_agent_cartpole(config, seed)


def default_config(seed: int = 0):
    """relayrl's PPO defaults: only the env, the policies and the seed are set."""
    from relayrl import PPOConfig

    return _two_agent_cartpole(PPOConfig(), seed)


def tuned_config(seed: int = 0):
    """relayrl's tuned single-agent CartPole example (docs/ppo.md, `examples/ppo_cartpole.py --tuned`) for each policy
    (the same config as the slow test tests/algorithms/test_ppo_multi_agent_learning.py)."""
    from relayrl import PPOConfig

    config = (PPOConfig().training(minibatch_size=512, num_epochs=8, lr=3e-3, gamma=0.98, lambda_=0.9)
              .env_runners(num_envs_per_env_runner=16))
    return _two_agent_cartpole(config, seed)


CONFIGS = {"rllib": rllib_config, "default": default_config, "tuned": tuned_config}


def main(argv=None):
    return settings_benchmark("multi_agent_cartpole", CONFIGS, t0=T0, stop_reward=900.0, stop_timesteps=400_000,
                              argv=argv, doc=__doc__)


if __name__ == "__main__":
    main()
