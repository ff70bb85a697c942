"""DQN with an LSTM (R2D2-style sequence replay, burn-in) on StatelessCartPole (CartPole without the velocities,
TimeLimit 500): env steps and wall time to a mean return, relayrl only, one process per run.

Usage: python benchmarks/dqn_lstm_stateless.py [--target 350] [--budget 300000] [--seed 0] [--mlp]
Prints one RESULT json line: reached, env steps, wall seconds (from process start), best mean return.
`--mlp` runs the same settings with a plain MLP (no memory) for comparison.
"""
import argparse
import json
import time

START = time.perf_counter()

# RLlib's stateless-CartPole DQN-with-LSTM example's model and burn-in (fcnet [256] tanh, heads [256], LSTM,
# max_seq_len 20, burn_in_len 8, double Q, dueling, MeanStdFilter, a uniform EpisodeReplayBuffer), with
# relayrl's 8 envs and n_step 3; 16 sequences per update and one update per 5 sampled env steps
# (training_intensity 64 = 16 x 20 trained steps per 5 sampled).
LSTM_DQN = dict(
    env_runners=dict(num_envs_per_env_runner=8, rollout_fragment_length=4),
    training=dict(lr=5e-4, train_batch_size=16, n_step=3, gamma=0.99, burn_in_len=8, double_q=True, dueling=True,
                  training_intensity=64, target_network_update_freq=500, num_steps_sampled_before_learning_starts=1000,
                  epsilon=[(0, 1.0), (10_000, 0.02)],
                  replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 100_000}),
    model_config=dict(use_lstm=True, max_seq_len=20, lstm_cell_size=64, fcnet_hiddens=[64], fcnet_activation="tanh",
                      head_fcnet_hiddens=[64], lstm_kernel_initializer="xavier_uniform_"),
)


def lstm_dqn_config(*, use_lstm: bool = True, seed: int = 0, **training):
    """The benchmark's (and the learning test's) DQN config; `training` overrides LSTM_DQN's training()."""
    from relayrl import DefaultModelConfig, DQNConfig
    from relayrl.testing.learning import stateless_cartpole

    stateless_cartpole()  # registers StatelessCartPole-v1 (TimeLimit 500)
    model = dict(LSTM_DQN["model_config"])
    if not use_lstm:
        model.update(use_lstm=False)
    train = {**LSTM_DQN["training"], **training}
    if not use_lstm:
        train["burn_in_len"] = 0
    return (DQNConfig().environment("StatelessCartPole-v1")
            .env_runners(env_to_module_connector=_mean_std_filter, **LSTM_DQN["env_runners"])
            .training(**train)
            .rl_module(model_config=DefaultModelConfig(**model))
            .debugging(seed=seed))


def _mean_std_filter(env=None, spaces=None, device=None):
    from relayrl.connectors import MeanStdFilter

    return MeanStdFilter()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", type=float, default=350.0)
    parser.add_argument("--budget", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mlp", action="store_true", help="a plain MLP instead of the LSTM")
    args = parser.parse_args()
    algo = lstm_dqn_config(use_lstm=not args.mlp, seed=args.seed).build_algo()
    best, ret, steps = float("-inf"), float("nan"), 0
    try:
        while steps < args.budget:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            best = max(best, ret) if ret == ret else best
            print(f"steps={steps} return={ret:.1f} t={time.perf_counter() - START:.0f}s", flush=True)
            if ret >= args.target:
                break
    finally:
        algo.stop()
    print("RESULT " + json.dumps({"run": "relayrl-dqn-" + ("mlp" if args.mlp else "lstm"), "seed": args.seed,
                                  "reached": bool(ret >= args.target), "env_steps": steps, "best": best,
                                  "wall_s": round(time.perf_counter() - START, 1)}))


if __name__ == "__main__":
    main()
