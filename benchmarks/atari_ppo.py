"""Benchmark: PPO on ALE/Pong-v5 throughput (env steps per second end to end, sampling + learning), not a
learning bar, with the settings of the peers' anchors (/work/shared/anchors/sb3_atari_ppo.py: rl-zoo's Atari
PPO, 8 envs, 128 steps each per iteration, 4 epochs of minibatch 256, lr 2.5e-4, clip 0.1, vf 0.5, entropy
0.01; 84x84 grayscale, frame skip 4, 4 frames stacked, no sticky actions, the default CNN for 84x84).

    .venv/bin/python benchmarks/atari_ppo.py [--train-s 60] [--envs 8] [--num-gpus-per-learner 1]
        [--num-gpus-per-env-runner 1] [--learner-cpus 2]
        [--vectorize-mode VECTOR_ENTRY_POINT]

After one warm-up iteration, trains for --train-s seconds (ANCHOR_TRAIN_S, like the anchors; stopping at the
next iteration boundary) and prints one `RESULT {json}` line. Needs the atari extra (ale-py, opencv).
"""
import argparse
import os
import pathlib
import time

from time_to_bar import report

T0 = time.perf_counter()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train-s", type=float, default=float(os.environ.get("ANCHOR_TRAIN_S", 60)))
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--num-gpus-per-learner", type=float, default=0, help="1: the Learner on cuda:0")
    parser.add_argument("--num-gpus-per-env-runner", type=float, default=0, help="1: inference on cuda:0")
    parser.add_argument("--vectorize-mode", default="SYNC", help="gym_env_vectorize_mode (VECTOR_ENTRY_POINT: "
                        "ale-py's AtariVectorEnv, its C++ threads step the envs)")
    parser.add_argument("--learner-cpus", type=int, default=None,
                        help="num_cpus_per_learner: the Learner's torch threads (default: relayrl's, one)")
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)
    import torch

    from relayrl import PPOConfig

    config = (PPOConfig()
              .environment("ALE/Pong-v5", env_config={"repeat_action_probability": 0.0}, clip_rewards=True)
              .env_runners(num_envs_per_env_runner=args.envs, rollout_fragment_length=128,
                           gym_env_vectorize_mode=args.vectorize_mode,
                           num_gpus_per_env_runner=args.num_gpus_per_env_runner)
              .training(train_batch_size=128 * args.envs, minibatch_size=256, num_epochs=4, lr=2.5e-4,
                        clip_param=0.1, vf_loss_coeff=0.5, entropy_coeff=0.01, lambda_=0.95, gamma=0.99)
              .learners(num_gpus_per_learner=args.num_gpus_per_learner,
                        **({"num_cpus_per_learner": args.learner_cpus} if args.learner_cpus else {}))
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
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
                   "learner_threads": torch.get_num_threads(), "vectorize_mode": args.vectorize_mode,
                   "env_runner_gpus": args.num_gpus_per_env_runner,
                   "steps": steps, "train_s": round(train_s, 1),
                   "sps": round(steps / train_s, 1), "wall_s": round(time.perf_counter() - T0, 1)}, args.json)


if __name__ == "__main__":
    main()
