"""The d3rlpy side of benchmarks/offline_updates.py: updates per second of d3rlpy's DiscreteBC (CartPole), CQL or IQL
(Pendulum) on the rows offline_updates.py exported (an .npz of the same transitions relayrl reads as parquet).

Runs in d3rlpy's own venv (/work/peers/d3; d3rlpy 2.8.1 pins gymnasium 1.0.0), single-threaded
(`--threads default`: torch's own):

    OMP_NUM_THREADS=1 /work/peers/d3/bin/python benchmarks/peer_d3rlpy_offline.py --algo bc --data rows.npz

Same work as relayrl's side: the same networks (two 256-unit relu layers; CQL: an actor and two critics; IQL: an
actor, two critics and a value network), batch
size, learning rates, and d3rlpy's own loop (`fit`: sample a batch from its replay buffer, update), logging off.
Prints one RESULT json line: updates, seconds, updates_per_s and cpu_updates_per_s (after `--warmup` updates).
"""
import argparse
import json
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--algo", choices=("bc", "cql", "iql"), required=True)
    parser.add_argument("--data", required=True, help="the .npz offline_updates.py wrote")
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--matmul-precision", default="highest", help="torch.set_float32_matmul_precision")
    parser.add_argument("--threads", choices=("1", "default"), default="1", help="default: torch's own (the cores)")
    args = parser.parse_args()

    import torch

    if args.threads == "1":
        torch.set_num_threads(1)
    torch.set_float32_matmul_precision(args.matmul_precision)
    import d3rlpy
    from d3rlpy.logging import NoopAdapterFactory

    rows = np.load(args.data)
    dataset = d3rlpy.dataset.MDPDataset(rows["obs"], rows["actions"], rows["rewards"].astype(np.float32),
                                        rows["terminateds"].astype(np.float32),
                                        timeouts=rows["truncateds"].astype(np.float32))
    encoder = d3rlpy.models.VectorEncoderFactory(hidden_units=[256, 256], activation="relu")
    if args.algo == "bc":
        algo = d3rlpy.algos.DiscreteBCConfig(batch_size=args.batch, learning_rate=1e-3,
                                             encoder_factory=encoder).create(device="cpu:0")
    elif args.algo == "iql":  # d3rlpy's IQL defaults (tau 0.005, expectile 0.7, weight_temp 3, learning rates 3e-4)
        algo = d3rlpy.algos.IQLConfig(batch_size=args.batch, actor_encoder_factory=encoder,
                                      critic_encoder_factory=encoder,
                                      value_encoder_factory=encoder).create(device="cpu:0")
    else:  # relayrl's CQL defaults: fixed conservative weight 5, 10 sampled actions, twin critics
        algo = d3rlpy.algos.CQLConfig(batch_size=args.batch, actor_learning_rate=1e-4, critic_learning_rate=1e-3,
                                      temp_learning_rate=1e-3, alpha_learning_rate=0.0, conservative_weight=5.0,
                                      n_action_samples=10, actor_encoder_factory=encoder,
                                      critic_encoder_factory=encoder).create(device="cpu:0")

    def fit(n):
        algo.fit(dataset, n_steps=n, n_steps_per_epoch=n, logger_adapter=NoopAdapterFactory(), show_progress=False,
                 save_interval=10 ** 9, with_timestamp=False)

    fit(args.warmup)
    start, cpu_start = time.perf_counter(), time.process_time()
    fit(args.updates)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    print("RESULT " + json.dumps({"peer": "d3rlpy", "version": d3rlpy.__version__, "algo": args.algo,
                                  "updates": args.updates, "seconds": round(seconds, 3),
                                  "updates_per_s": round(args.updates / seconds, 2),
                                  "cpu_updates_per_s": round(args.updates / cpu_seconds, 2),
                                  "matmul_precision": torch.get_float32_matmul_precision(),
                                  "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
