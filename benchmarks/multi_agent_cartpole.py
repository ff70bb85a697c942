"""Benchmark: PPO with two policies (p0, p1) on two-agent CartPole to a summed mean return of 900 (450 per
agent) within 400k env steps: RLlib's multi-agent bar.

    .venv/bin/python benchmarks/multi_agent_cartpole.py [--settings rllib|default|tuned] [--seed 0] [--json FILE]

`--settings rllib` (the default): RLlib's tuned example (rllib/examples/algorithms/ppo/multi_agent_cartpole_ppo.py,
RLlib's PPO defaults plus its changes); `default`: relayrl's PPO defaults, nothing tuned; `tuned`: relayrl's
tuned single-agent CartPole example (README) applied to each policy. Prints one JSON line (RESULT {...}) with
the env steps, wall seconds from process start and CPU seconds. Peer: /work/shared/anchors/rllib_ma_cartpole.py.
"""
import argparse
import pathlib
import time

from time_to_bar import report, train_to_bar

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
    """relayrl's tuned single-agent CartPole example (README, `examples/ppo_cartpole.py --tuned`) for each policy
    (the same config as the slow test tests/algorithms/test_ppo_multi_agent_learning.py)."""
    from relayrl import PPOConfig

    config = (PPOConfig().training(minibatch_size=512, num_epochs=8, lr=3e-3, gamma=0.98, lambda_=0.9)
              .env_runners(num_envs_per_env_runner=16))
    return _two_agent_cartpole(config, seed)


CONFIGS = {"rllib": rllib_config, "default": default_config, "tuned": tuned_config}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--settings", choices=tuple(CONFIGS), default="rllib")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=900.0)
    parser.add_argument("--stop-timesteps", type=int, default=400_000)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    start, cpu_start = time.perf_counter(), time.process_time()
    algo = CONFIGS[args.settings](args.seed).build_algo()
    built = time.perf_counter()
    result, _ = train_to_bar(algo, stop_reward=args.stop_reward, stop_timesteps=args.stop_timesteps)
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    end, cpu_s = time.perf_counter(), time.process_time() - cpu_start
    train_s = end - built
    return report({"task": "multi_agent_cartpole", "settings": args.settings, "seed": args.seed,
                   "solved": bool(ret >= args.stop_reward), "return": round(ret, 1), "steps": steps,
                   "train_s": round(train_s, 1), "build_s": round(built - start, 2), "wall_s": round(end - T0, 1),
                   "env_steps_per_s": round(steps / train_s, 1),
                   # CPU seconds of this process: on a shared, busy machine wall time says little.
                   "cpu_s": round(cpu_s, 1)}, args.json)


if __name__ == "__main__":
    main()
