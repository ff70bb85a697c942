"""Benchmark: PPO Learner throughput on Pong-shaped data, relayrl's Learner vs a plain torch loop of the same
network on the same device (issue 25: at least 90% of plain torch on a GPU).

    .venv/bin/python benchmarks/gpu_learner_throughput.py [--device cuda|cpu] [--rounds 3] [--updates 5]

Data: 8 envs x 128 steps of 84x84x4 uint8 frames and 6 actions (Atari after the standard preprocessing), from a
synthetic env (random frames: the update's cost does not depend on what the pixels show). rl-zoo's Atari PPO
settings: 4 epochs of minibatch 256, clip 0.1, vf 0.5, entropy 0.01, lr 2.5e-4, grad clip 0.5.

Both sides run one whole PPO update per call: the uint8 batch to the device, values for GAE (no grad), GAE,
then 4 epochs of shuffled minibatches (forward, loss, backward, clip, Adam). relayrl's side is
`learner_group.update(episodes=...)` (its connector pipeline builds the batch from the episodes); the plain
side starts from ready numpy arrays, so it does strictly less. Rounds alternate the two; the best round of each
counts. Prints one `RESULT {json}` line: rows (env steps) per second through the update for each side.
"""
import argparse
import copy
import pathlib
import sys
import time

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from time_to_bar import report  # noqa: E402

ENVS, STEPS, MINIBATCH, EPOCHS = 8, 128, 256, 4
CLIP, VF_COEFF, ENTROPY_COEFF, LR, GRAD_CLIP, GAMMA, LAMBDA = 0.1, 0.5, 0.01, 2.5e-4, 0.5, 0.99, 0.95


class PongShapedEnv(gym.Env):
    observation_space = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    action_space = gym.spaces.Discrete(6)

    def __init__(self, config=None):
        self._t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self.np_random.integers(0, 256, (84, 84, 4), dtype=np.uint8), {}

    def step(self, action):
        self._t += 1
        obs = self.np_random.integers(0, 256, (84, 84, 4), dtype=np.uint8)
        return obs, float(self.np_random.choice([-1.0, 0.0, 1.0])), False, self._t >= 500, {}


def build(device: str):
    from relayrl import PPOConfig

    config = (PPOConfig().environment(PongShapedEnv)
              .env_runners(num_envs_per_env_runner=ENVS, rollout_fragment_length=STEPS)
              .training(train_batch_size=ENVS * STEPS, minibatch_size=MINIBATCH, num_epochs=EPOCHS, lr=LR,
                        clip_param=CLIP, vf_loss_coeff=VF_COEFF, entropy_coeff=ENTROPY_COEFF, grad_clip=GRAD_CLIP,
                        gamma=GAMMA, lambda_=LAMBDA)
              .learners(num_gpus_per_learner=1 if device == "cuda" else 0)
              .debugging(seed=0, logger_config={"type": "none"}))
    return config.build_algo()


def plain_batch(episodes):
    """The numpy arrays a plain PPO loop would keep: obs (with each chunk's bootstrap obs), actions, logp."""
    obs, actions, logp, rewards, dones, last = [], [], [], [], [], []
    for episode in episodes:
        o = np.asarray(episode.get_observations())
        obs.append(o[:-1])
        last.append(len(obs[-1]) - 1)
        actions.append(np.asarray(episode.get_actions()))
        logp.append(np.asarray(episode.get_extra_model_outputs("action_logp")))
        rewards.append(np.asarray(episode.get_rewards(), np.float32))
        done = np.zeros(len(o) - 1, np.float32)
        done[-1] = float(episode.is_terminated)
        dones.append(done)
    return {"obs": np.concatenate(obs), "actions": np.concatenate(actions), "logp": np.concatenate(logp),
            "rewards": np.concatenate(rewards), "dones": np.concatenate(dones)}


def gae(values, rewards, dones):
    advantages = np.zeros_like(rewards)
    next_adv, next_value = 0.0, values[-1]
    for t in range(len(rewards) - 1, -1, -1):
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + GAMMA * next_value * nonterminal - values[t]
        next_adv = delta + GAMMA * LAMBDA * nonterminal * next_adv
        advantages[t], next_value = next_adv, values[t]
    return advantages, advantages + values


def plain_update(module, optimizer, data, device):
    """One PPO update in plain torch on the same network (its forward_train and value head)."""
    to = (lambda a: torch.from_numpy(a).pin_memory().to(device, non_blocking=True)) if device.type == "cuda" \
        else torch.from_numpy
    obs, actions, old_logp = to(data["obs"]), to(data["actions"]), to(data["logp"])
    with torch.no_grad():
        values = module.compute_values({"obs": obs}).cpu().numpy()
    advantages, targets = gae(values, data["rewards"], data["dones"])
    advantages = (advantages - advantages.mean()) / max(1e-4, advantages.std())
    advantages, targets = to(advantages.astype(np.float32)), to(targets.astype(np.float32))
    params = [p for p in module.parameters() if p.requires_grad]
    n = len(actions)
    for _ in range(EPOCHS):
        order = torch.randperm(n, device=device)
        for start in range(0, n - MINIBATCH + 1, MINIBATCH):
            idx = order[start:start + MINIBATCH]
            out = module.forward_train({"obs": obs[idx]})
            dist = torch.distributions.Categorical(logits=out["action_dist_inputs"])
            ratio = torch.exp(dist.log_prob(actions[idx]) - old_logp[idx])
            adv = advantages[idx]
            surrogate = torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - CLIP, 1 + CLIP))
            value = module.compute_values({"obs": obs[idx]}, embeddings=out.get("embeddings"))
            loss = (-surrogate + VF_COEFF * (value - targets[idx]) ** 2 - ENTROPY_COEFF * dist.entropy()).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, GRAD_CLIP)
            optimizer.step()


def timed(fn, updates: int, device) -> float:
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(updates):
        fn()
    sync()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (both sides)")
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)
    algo = build(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        learner = algo.learner_group._learner
        device = learner.device
        episodes = algo.env_runner.sample()
        rows = sum(len(e) for e in episodes)
        module = copy.deepcopy(learner.module["default_policy"])
        optimizer = torch.optim.Adam(module.parameters(), lr=LR, fused=device.type == "cuda")
        data = plain_batch(episodes)
        relayrl_update = lambda: algo.learner_group.update(episodes=episodes, timesteps={})  # noqa: E731
        plain = lambda: plain_update(module, optimizer, data, device)  # noqa: E731
        relayrl_update(), plain()  # warm-up: kernels, allocator, cuDNN's algorithm choice
        # Where relayrl's time goes: its connector pipeline alone (episodes -> batch on the device, GAE included)
        # and the update from that ready batch.
        connector = lambda: learner._learner_connector(  # noqa: E731
            rl_module=learner.module, batch={}, episodes=episodes, explore=False, shared_data={},
            metrics=learner.metrics)
        ready = connector()
        from_batch = lambda: algo.learner_group.update(batch=ready, timesteps={})  # noqa: E731
        parts = {"relayrl": relayrl_update, "plain_torch": plain, "relayrl_connector": connector,
                 "relayrl_update_from_batch": from_batch}
        best = {name: float("inf") for name in parts}
        for _ in range(args.rounds):
            for name, fn in parts.items():
                best[name] = min(best[name], timed(fn, args.updates, device))
    finally:
        algo.stop()
    rps = {name: round(rows * args.updates / best[name]) for name in ("relayrl", "plain_torch")}
    ms = {name: round(1e3 * seconds / args.updates, 1) for name, seconds in best.items()}
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else f"cpu x{torch.get_num_threads()} threads"
    return report({"task": "ppo_pong_learner_throughput", "device": name, "rows_per_update": rows,
                   "rows_per_s": rps, "relayrl_vs_plain": round(rps["relayrl"] / rps["plain_torch"], 3),
                   "ms_per_update": ms}, args.json)


if __name__ == "__main__":
    main()
