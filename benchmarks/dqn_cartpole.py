"""Benchmark: DQN on CartPole-v1 to mean return >= 450 within 200k steps.

    .venv/bin/python benchmarks/dqn_cartpole.py [--settings rllib|default] [--seed 0] [--json FILE]

`--settings rllib` (the default): the same settings as RLlib's `examples/algorithms/dqn/cartpole_dqn.py`
(one Learner, no remote EnvRunners); `--settings default`: relayrl's DQN defaults, nothing tuned. Prints one
JSON line (RESULT {...}) with the env steps, wall seconds and CPU seconds it took. Peers:
/work/shared/anchors/rllib_offpolicy.py dqn and sb3_offpolicy.py dqn.
"""
import argparse
import pathlib
import time

from time_to_bar import report, train_to_bar

T0 = time.perf_counter()


def rllib_cartpole_config(seed: int = 0):
    """RLlib's tuned CartPole DQN settings (num_learners=0)."""
    from relayrl import DefaultModelConfig
    from relayrl.algorithms.dqn import DQNConfig
    from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_DEFAULTS

    return (
        DQNConfig()
        .update_from_dict(RLLIB_DQN_DEFAULTS)  # RLlib's tuned example changes only what follows
        .environment("CartPole-v1")
        .training(lr=0.0005, train_batch_size_per_learner=32,
                  replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50000, "alpha": 0.6,
                                        "beta": 0.4},
                  n_step=(2, 5), double_q=True, dueling=True, epsilon=[(0, 1.0), (10000, 0.02)])
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[256], fcnet_activation="tanh",
                                                   fcnet_bias_initializer="zeros_", head_fcnet_hiddens=[256],
                                                   head_fcnet_bias_initializer="zeros_"))
        .debugging(seed=seed, logger_config={"type": "none"})
    )


def default_config(seed: int = 0):
    """relayrl's DQN defaults: only the env and the seed are set."""
    from relayrl.algorithms.dqn import DQNConfig

    return DQNConfig().environment("CartPole-v1").debugging(seed=seed, logger_config={"type": "none"})


CONFIGS = {"rllib": rllib_cartpole_config, "default": default_config}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--settings", choices=tuple(CONFIGS), default="rllib")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-reward", type=float, default=450.0)
    parser.add_argument("--stop-timesteps", type=int, default=200_000)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    start, cpu_start = time.perf_counter(), time.process_time()
    algo = CONFIGS[args.settings](args.seed).build_algo()
    built = time.perf_counter()
    result, _ = train_to_bar(algo, stop_reward=args.stop_reward, stop_timesteps=args.stop_timesteps)
    ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
    end, cpu_s = time.perf_counter(), time.process_time() - cpu_start
    train_s = end - built
    return report({"task": "dqn_cartpole", "settings": args.settings, "seed": args.seed, "solved": bool(ret >= args.stop_reward),
                   "return": round(ret, 1), "steps": steps, "train_s": round(train_s, 1),
                   "build_s": round(built - start, 2), "wall_s": round(end - T0, 1),
                   "env_steps_per_s": round(steps / train_s, 1),
                   # CPU seconds of this process: on a shared, busy machine wall time says little.
                   "cpu_s": round(cpu_s, 1),
                   "env_steps_trained": result["num_env_steps_trained_lifetime"]}, args.json)

if __name__ == "__main__":
    main()
