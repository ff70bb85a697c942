"""Benchmark: PPO on ALE/Pong-v5 throughput (env steps per second end to end, sampling + learning), not a
learning bar, with the settings of the peers' anchors (/work/shared/anchors/sb3_atari_ppo.py: rl-zoo's Atari
PPO, 8 envs, 128 steps each per iteration, 4 epochs of minibatch 256, lr 2.5e-4, clip 0.1, vf 0.5, entropy
0.01; 84x84 grayscale, frame skip 4, 4 frames stacked, no sticky actions, the default CNN for 84x84).

    .venv/bin/python benchmarks/atari_ppo.py [--train-s 60] [--envs 8] [--num-gpus-per-learner 1]
        [--num-gpus-per-env-runner 1] [--learner-cpus 2]
        [--vectorize-mode VECTOR_ENTRY_POINT]

After one warm-up iteration, trains for --train-s seconds (ANCHOR_TRAIN_S, like the anchors; stopping at the
next iteration boundary) and prints one `RESULT {json}` line. Needs the atari extra (ale-py, opencv).
`--curve-steps N` measures learning instead: the mean return after each iteration up to N env steps (the defaults
against `--vectorize-mode SYNC --learner-cpus 1`: the fast path must not change what is learned).
"""
import argparse
import os
import pathlib
import time

from time_to_bar import report

T0 = time.perf_counter()


def pong_ppo_config(envs: int = 8, seed: int = 0):
    """The anchors' algorithm settings (rl-zoo's Atari PPO) and no speed setting: relayrl picks the vector env and
    the Learner's threads."""
    from relayrl import PPOConfig

    return (PPOConfig()
            .environment("ALE/Pong-v5", env_config={"repeat_action_probability": 0.0}, clip_rewards=True)
            .env_runners(num_envs_per_env_runner=envs, rollout_fragment_length=128)
            .training(train_batch_size=128 * envs, minibatch_size=256, num_epochs=4, lr=2.5e-4,
                      clip_param=0.1, vf_loss_coeff=0.5, entropy_coeff=0.01, lambda_=0.95, gamma=0.99)
            .debugging(seed=seed, logger_config={"type": "none"}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train-s", type=float, default=float(os.environ.get("ANCHOR_TRAIN_S", 60)))
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--num-gpus-per-learner", type=float, default=0, help="1: the Learner on cuda:0")
    parser.add_argument("--num-gpus-per-env-runner", type=float, default=0, help="1: inference on cuda:0")
    parser.add_argument("--vectorize-mode", default=None, help="gym_env_vectorize_mode (default: relayrl's choice, "
                        "VECTOR_ENTRY_POINT here: ale-py's AtariVectorEnv, its C++ threads step the envs; SYNC: "
                        "gymnasium's wrappers around each env)")
    parser.add_argument("--learner-cpus", type=int, default=None,
                        help="num_cpus_per_learner: the Learner's torch threads (default: relayrl's, the usable cores)")
    parser.add_argument("--curve-steps", type=int, default=None, help="learning, not speed: train from the start "
                        "until this many env steps and report the mean return (last 100 games) after each iteration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)
    # relayrl first, as a script that starts with `from relayrl import ...`: imported before torch, it makes OpenMP's
    # waits passive, and only then does an image Learner take more than one thread (relayrl/omp_wait_policy.py).
    config = pong_ppo_config(envs=args.envs, seed=args.seed).learners(num_gpus_per_learner=args.num_gpus_per_learner)
    import torch

    config.env_runners(num_gpus_per_env_runner=args.num_gpus_per_env_runner)
    if args.vectorize_mode:
        config.env_runners(gym_env_vectorize_mode=args.vectorize_mode)
    if args.learner_cpus:
        config.learners(num_cpus_per_learner=args.learner_cpus)
    algo = config.build_algo()
    if args.curve_steps:
        return learning_curve(algo, args)
    try:
        warm = algo.train()
        start, start_steps = time.perf_counter(), warm["num_env_steps_sampled_lifetime"]
        while time.perf_counter() - start < args.train_s:
            result = algo.train()
        train_s = time.perf_counter() - start
        steps = result["num_env_steps_sampled_lifetime"] - start_steps
    finally:
        algo.stop()
    return report({"task": "ppo_pong_throughput", "envs": args.envs, "learner_gpus": args.num_gpus_per_learner,
                   "learner_threads": torch.get_num_threads(), "vectorize_mode": algo.config.gym_env_vectorize_mode,
                   "env_runner_gpus": args.num_gpus_per_env_runner,
                   "steps": steps, "train_s": round(train_s, 1),
                   "sps": round(steps / train_s, 1), "wall_s": round(time.perf_counter() - T0, 1)}, args.json)


def learning_curve(algo, args):
    """Train to --curve-steps env steps; the RESULT holds [env steps, mean return] after each iteration."""
    curve, start = [], time.perf_counter()
    try:
        while not curve or curve[-1][0] < args.curve_steps:
            result = algo.train()
            curve.append([result["num_env_steps_sampled_lifetime"],
                          round(result["env_runners"]["episode_return_mean"], 2)])
            if len(curve) % 50 == 0:
                print(f"steps={curve[-1][0]} return={curve[-1][1]} t={time.perf_counter() - start:.0f}s", flush=True)
    finally:
        algo.stop()
    return report({"task": "ppo_pong_curve", "seed": args.seed, "vectorize_mode": algo.config.gym_env_vectorize_mode,
                   "learner_cpus": args.learner_cpus, "curve": curve,
                   "train_s": round(time.perf_counter() - start, 1)}, args.json)


if __name__ == "__main__":
    main()
