"""Tune PPO on CartPole-v1 for least wall time to episode_return_mean >= 450 (100-episode smoothing).

Each (settings, seed) run is a fresh subprocess (torch 1 thread) so import/build/train times are real.

    python benchmarks/tune_ppo_cartpole.py                      # BEST over seeds 0..4
    python benchmarks/tune_ppo_cartpole.py --name rllib_example # a named settings dict from SETTINGS
    python benchmarks/tune_ppo_cartpole.py --settings '{"num_epochs": 10}'   # BEST updated with JSON
    python benchmarks/tune_ppo_cartpole.py --search [--jobs 2]  # the small search that picked BEST

`--jobs 2` runs two runs at once (fine for steps; for timings use --jobs 1 on an idle machine).
Prints one line per seed (solved, env steps, minibatch updates, train seconds, total seconds) and a summary.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

STOP_REWARD = 450.0
STOP_TIMESTEPS = 300_000
SEEDS = [0, 1, 2, 3, 4]

# Keys that are not PPOConfig.training() options.
_RUNNER_KEYS = {"num_envs", "hiddens", "activation", "vf_share_layers"}

BASE = dict(
    num_envs=8, hiddens=[64, 64], activation="tanh", vf_share_layers=False,
    train_batch_size=256, minibatch_size=256, num_epochs=20,
    lr=[[0, 1e-3], [100_000, 0.0]], gamma=0.98, lambda_=0.8, clip_param=0.2,
    vf_loss_coeff=0.5, vf_clip_param=float("inf"), entropy_coeff=0.0,
    use_kl_loss=False, grad_clip=None,
)

SETTINGS = {
    # SB3 rl-zoo CartPole settings (clip not decayed here).
    "sb3_zoo": dict(BASE),
    # RLlib's tuned example (tuned_examples/ppo/cartpole_ppo.py).
    "rllib_example": dict(BASE, num_envs=1, hiddens=[32], activation="linear", vf_share_layers=True,
                          train_batch_size=4000, minibatch_size=128, num_epochs=6, lr=3e-4,
                          vf_loss_coeff=0.01, gamma=0.99, lambda_=1.0, clip_param=0.3, vf_clip_param=10.0,
                          use_kl_loss=True),
}
# The second search's winner (SEARCH_LARGE_MINIBATCHES below) = examples/ppo_cartpole.py TUNED.
BEST = dict(BASE, num_envs=16, train_batch_size=2048, minibatch_size=512, num_epochs=8, lr=3e-3, gamma=0.98,
            lambda_=0.9, clip_param=0.2, grad_clip=0.5)
SETTINGS["best"] = BEST


def run_one(settings: dict, seed: int) -> None:
    """Runs in the child process; prints `RESULT {json}`."""
    t0 = time.perf_counter()
    import torch
    torch.set_num_threads(1)
    from relayrl import PPOConfig
    t_import = time.perf_counter()
    s = dict(settings)
    training = {k: v for k, v in s.items() if k not in _RUNNER_KEYS}
    if training.get("grad_clip") is None:
        training.pop("grad_clip", None)
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_envs_per_env_runner=s["num_envs"])
              .training(**training)
              .rl_module(model_config={"fcnet_hiddens": s["hiddens"], "fcnet_activation": s["activation"],
                                       "vf_share_layers": s["vf_share_layers"]})
              .reporting(metrics_num_episodes_for_smoothing=100)
              .debugging(seed=seed))
    algo = config.build_algo()
    t_built = time.perf_counter()
    iters = 0
    while True:
        r = algo.train()
        iters += 1
        ret = r["env_runners"].get("episode_return_mean", float("nan"))
        steps = r["num_env_steps_sampled_lifetime"]
        if ret >= STOP_REWARD or steps >= STOP_TIMESTEPS:
            break
    t_end = time.perf_counter()
    algo.stop()
    mb_per_iter = s["num_epochs"] * math.ceil(s["train_batch_size"] / s["minibatch_size"])
    print("RESULT " + json.dumps({
        "seed": seed, "solved": ret >= STOP_REWARD, "steps": steps, "iters": iters, "updates": iters * mb_per_iter,
        "return": ret, "import_s": t_import - t0, "build_s": t_built - t_import, "train_s": t_end - t_built,
        "total_s": t_end - t0,
    }), flush=True)


def launch(settings: dict, seed: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(settings), "--seed", str(seed)],
                          capture_output=True, text=True, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"seed": seed, "solved": False, "error": (proc.stderr or proc.stdout)[-2000:]}


def evaluate(name: str, settings: dict, seeds=SEEDS, jobs: int = 1, verbose: bool = True) -> dict:
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda sd: launch(settings, sd), seeds))
    if verbose:
        print(f"== {name}: {json.dumps(settings)}")
        for r in results:
            if "error" in r:
                print(f"  seed {r['seed']}: ERROR {r['error']}")
                continue
            print(f"  seed {r['seed']}: solved={r['solved']!s:5} steps={r['steps']:7d} updates={r['updates']:5d} "
                  f"train={r['train_s']:6.2f}s total={r['total_s']:6.2f}s return={r['return']:.1f}")
    ok = [r for r in results if "error" not in r]
    summary = {
        "name": name, "solved": sum(r["solved"] for r in ok), "n": len(results),
        "mean_steps": sum(r["steps"] for r in ok) / max(len(ok), 1),
        "max_steps": max((r["steps"] for r in ok), default=0),
        "mean_train_s": sum(r["train_s"] for r in ok) / max(len(ok), 1),
        "max_train_s": max((r["train_s"] for r in ok), default=0),
        "mean_total_s": sum(r["total_s"] for r in ok) / max(len(ok), 1),
        "results": results,
    }
    if verbose:
        print(f"  -> solved {summary['solved']}/{summary['n']}  mean steps {summary['mean_steps']:.0f}  "
              f"max steps {summary['max_steps']}  mean train {summary['mean_train_s']:.2f}s  "
              f"max train {summary['max_train_s']:.2f}s  mean total {summary['mean_total_s']:.2f}s", flush=True)
    return summary


# The search actually run (seeds 0..3 or 0..4, --jobs 2); results in the comments (solved / mean steps).
# Runs are deterministic per seed. Only the SB3-zoo point solved 5/5; the failures are a plateau at
# return ~100-300 (entropy ~0.28, vf_explained_var ~1), not a late collapse.
SEARCH = [
    ("sb3_zoo", {}),                                                        # 5/5, 86.6k, max 117k  <- BEST
    ("ep10", dict(num_epochs=10)),                                          # 4/5, 80-131k when solved
    ("ep10_lr2e-3", dict(num_epochs=10, lr=[[0, 2e-3], [100_000, 0.0]])),   # 4/4, 104k
    ("ep10_gclip0.5", dict(num_epochs=10, grad_clip=0.5)),                  # 3/4
    ("ep10_kl", dict(num_epochs=10, use_kl_loss=True)),                     # 2/4
    ("ep10_clip0.1_lr2e-3", dict(num_epochs=10, clip_param=0.1, lr=[[0, 2e-3], [100_000, 0.0]])),  # 2/4 (63k/72k)
    ("ep10_g0.99", dict(num_epochs=10, gamma=0.99)),                        # 3/5
    ("ep10_g0.99_l0.9", dict(num_epochs=10, gamma=0.99, lambda_=0.9)),      # 4/5, ~90k when solved
    ("ep5_lr3e-3", dict(num_epochs=5, lr=[[0, 3e-3], [100_000, 0.0]])),     # 2/4
    ("e16_b1024_full_ep10_lr1e-3c", dict(num_envs=16, train_batch_size=1024, minibatch_size=1024,
                                         num_epochs=10, lr=1e-3)),          # 4/4, 185k
    ("e16_b1024_full_ep10_lr3e-3c", dict(num_envs=16, train_batch_size=1024, minibatch_size=1024,
                                         num_epochs=10, lr=3e-3)),          # 4/4, 130k
    ("e16_b512_full_ep10_lr1e-3c", dict(num_envs=16, train_batch_size=512, minibatch_size=512,
                                        num_epochs=10, lr=1e-3)),           # 4/4, 169k
    ("e16_b1024_mb256_ep4_lr1e-3c", dict(num_envs=16, train_batch_size=1024, minibatch_size=256,
                                         num_epochs=4, lr=1e-3)),           # 4/4, 150k
    ("e16_b1024_full_ep10_lr3e-3_d60k", dict(num_envs=16, train_batch_size=1024, minibatch_size=1024,
                                             num_epochs=10, lr=[[0, 3e-3], [60_000, 0.0]])),  # 0/4
    ("e8_b256_ep10_lr1e-3_d60k", dict(num_epochs=10, lr=[[0, 1e-3], [60_000, 0.0]])),         # 2/4
    ("e16_b512_full_ep10_lr2e-3_d60k", dict(num_envs=16, train_batch_size=512, minibatch_size=512,
                                            num_epochs=10, lr=[[0, 2e-3], [60_000, 0.0]])),   # 1/4
    ("e16_b512_mb256_ep10", dict(num_envs=16, train_batch_size=512, minibatch_size=256, num_epochs=10)),  # 2/4
]


# Second search, which picked BEST: each line changes relayrl's PPO defaults (8 envs, 2048/64/10, lr 3e-4,
# gamma 0.99, lambda 0.95, grad_clip 0.5) as shown; solved / env steps to 450 over seeds 0-4 (0-2 where noted).
# Per-sample learner time falls ~5x from 64- to 512-row minibatches (about 1.0 vs 1.3 ms per update of this
# 64x64 MLP), so the search looked for large minibatches that keep the step count; a higher lr makes up for
# the fewer updates. (Run as PPOConfig() plus the overrides; here, --settings merges over BEST instead.)
#   defaults                                      3/3  61-65k (seeds 0-2)
#   minibatch 256                                 3/3  129-145k (seeds 0-2)
#   minibatch 256, lr 1e-3                        3/3  63-71k (seeds 0-2)
#   minibatch 512, lr 2e-3                        5/5  65-77k
#   minibatch 512, lr 3e-3                        5/5  59-63k
#   minibatch 1024, lr 3e-3                       5/5  71-79k
#   minibatch 512, lr 2e-3, 5 epochs              5/5  81-120k
#   minibatch 512, lr 3e-3, gamma .98, lambda .9  5/5  57-71k
#     + 16 envs                                   5/5  61-73k
#     + 16 envs, 8 epochs            <- BEST      5/5  61-67k
#     + 32 envs, 8 epochs                         5/5  63-71k
#     + 16 envs, 6 epochs, lr 4e-3                5/5  61-96k
#   BEST with vf_share_layers=True                5/5  141-178k
#   BEST with fcnet_hiddens [32, 32]              5/5  77-88k
# Third search (BEST's changes; solved / mean env steps / max, seeds 0-4): none beat BEST (5/5, 63.9k, max 68k).
#   train_batch_size 1024                         5/5  72.9k  max 81k
#   train_batch_size 1024, 6 epochs               5/5  78.8k  max 91k
#   train_batch_size 1024, 8 envs                 5/5  75.6k  max 86k
#   train_batch_size 1024, lr 2e-3                5/5  80.9k  max 87k
#   train_batch_size 1536                         5/5  67.9k  max 84k
#   6 epochs                                      5/5  75.0k  max 84k


def search(jobs: int) -> None:
    summaries = []
    for name, delta in SEARCH:
        summaries.append(evaluate(name, dict(BASE, **delta), jobs=jobs))
    print("\n== ranking (solved desc, mean steps*train) ==")
    for s in sorted(summaries, key=lambda s: (-s["solved"], s["mean_train_s"])):
        print(f"  {s['name']:16} solved {s['solved']}/{s['n']} mean steps {s['mean_steps']:8.0f} "
              f"max steps {s['max_steps']:7d} mean train {s['mean_train_s']:6.2f}s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=str, default=",".join(map(str, SEEDS)))
    ap.add_argument("--name", default="best", choices=sorted(SETTINGS))
    ap.add_argument("--settings", help="JSON dict merged over BEST (or over --name)")
    ap.add_argument("--search", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    if args.child:
        return run_one(json.loads(args.child), args.seed)
    if args.search:
        return search(args.jobs)
    settings = dict(SETTINGS[args.name])
    if args.settings:
        settings.update(json.loads(args.settings))
    evaluate(args.name, settings, seeds=[int(x) for x in args.seeds.split(",")], jobs=args.jobs)


if __name__ == "__main__":
    main()
