"""DQN and SAC updates per second: relayrl's off-policy update against a plain torch loop of the same work.

    .venv/bin/python benchmarks/offpolicy_updates.py [--algo DQN|SAC|both] [--updates 300] [--repeats 3]
                                                     [--clock wall|cpu] [--device cpu|cuda]
                                                     [--replay default|uniform|prioritized]

One update is what DQN's `training_step` does per learner update: a replay sample of
`train_batch_size_per_learner` n-step transitions, the loss, backward, the gradient check and clipping,
the optimizer step(s) and the target-network update, and (prioritized replay) the priority update.

The plain torch loop does the same work the way a hand-written script would: the same networks (copies of
relayrl's module, called as nn.Modules), the same batch size and n-step targets, transitions stored
n-step-ready in flat tensors and drawn uniformly with `torch.randint`, torch's fused Adam and
`clip_grad_norm_`, and the same loss math in one backward pass. relayrl's buffer stores episodes and builds
each n-step transition when it is sampled, keeps per-update statistics and checks the gradients; what the
figure shows is what that costs. Both run single-threaded and alternate, best of `repeats` windows each.
With `--device cuda` both update on the GPU (relayrl: `num_gpus_per_learner=1`): replay stays on the CPU and
each sampled batch goes over through pinned memory, in both loops.

Before/after a change: run it from two checkouts in turn (it runs against relayrl versions without deferred
metric reduction too). Measured on the shared 2-core machine (load 5-8, so only the ratio within one process
means anything), relayrl's defaults of the time (DQN [256] tanh + 256 heads, batch 32, prioritized; SAC
[256, 256], batch 256, prioritized), three interleaved rounds each:

    before (d722c72): DQN 0.78 / 0.53 / 0.73 of plain torch, SAC 0.79 / 1.06 / 0.88
    after  (this):    DQN 0.89 / 0.76 / 0.94,                SAC 1.11 / 0.89 / 0.85

With the DQN/SAC defaults of 450d8d5 (DQN batch 64, same networks, prioritized), `--updates 200 --repeats 5`,
same machine under load 8-12: DQN 0.94 of plain torch (48.9 vs 52.2 updates/s), SAC 1.05 (14.2 vs 13.6).
The plain loop draws uniformly; relayrl's prioritized sample and priority update are most of DQN's gap.

After the CPU pass for double Q's Q(new_obs) (relayrl/algorithms/dqn/next_q_pass.py) and cheaper
prioritized replay (2026-11-27, same machine, load 2-3.3, main and this branch run in turn): DQN
0.85-0.89 -> 0.95-1.02 of plain torch, SAC 0.72-0.96 -> 0.95-0.99 (docs/learners.md#speed has every round).
`--clock cpu` times windows by process CPU time: steadier than wall time on a shared machine.
"""
import argparse
import copy
import json
import time

import torch
import torch.nn.functional as F

NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"


def _build(algo_name: str, seed: int = 0, device: str = "cpu", compile_what=None, replay: str = "default"):
    from relayrl.algorithms.dqn import DQNConfig
    from relayrl.algorithms.sac import SACConfig

    config = (DQNConfig().environment("CartPole-v1") if algo_name == "DQN" else SACConfig().environment("Pendulum-v1"))
    config.training(num_steps_sampled_before_learning_starts=0).debugging(seed=seed, logger_config={"type": "none"})
    if device == "cuda":
        config.learners(num_gpus_per_learner=1)
    if replay == "uniform":  # the plain loop's kind of replay: no priorities to sample by or update
        config.training(replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 1_000_000})
    elif replay == "prioritized":  # RLlib's default for both (alpha 0.6, beta 0.4 filled in)
        config.training(replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer"})
    if compile_what:
        config.framework(torch_compile_learner=True, torch_compile_learner_what_to_compile=compile_what)
    algo = config.build_algo()
    while len(algo.local_replay_buffer) < 5000:  # a buffer to replay from; no updates yet
        episodes, _ = algo.sample_episodes(max_env_steps=1)
        algo.local_replay_buffer.add(episodes)
    return algo


def _plain_replay(algo):
    """Every stored transition, n-step-ready, as flat tensors (what a hand-written n-step buffer keeps)."""
    cfg, buffer = algo.config, algo.local_replay_buffer
    n = len(buffer)
    data = buffer.sample(n, n_step=cfg.n_step, gamma=cfg.gamma)
    discounts = cfg.gamma ** data["n_step"].astype("float32") * (1.0 - data["terminateds"].astype("float32"))
    return {"obs": torch.from_numpy(data["obs"]), "actions": torch.from_numpy(data["actions"]),
            "rewards": torch.from_numpy(data["rewards"].astype("float32")),
            "new_obs": torch.from_numpy(data["new_obs"]), "discounts": torch.from_numpy(discounts)}


def _to(device):
    """CPU batch -> device, as a hand-written GPU loop moves a replay sample (pinned, non-blocking)."""
    if device.type == "cpu":
        return lambda tensor: tensor
    return lambda tensor: tensor.pin_memory().to(device, non_blocking=True)


def _steps_per_update(cfg) -> float:
    """Env steps sampled per learner update at the config's replay ratio (advances the targets' clock)."""
    intensity = cfg.training_intensity
    return cfg.total_train_batch_size / intensity if intensity else cfg.get_rollout_fragment_length() * \
        cfg.num_envs_per_env_runner


def plain_dqn_loop(algo):
    cfg = algo.config
    module = copy.deepcopy(algo.learner_group._learner.module["default_policy"])
    encoder, af, vf = module.encoder, module.af, module.vf
    target = [copy.deepcopy(net) for net in (encoder, af, vf)]
    params = [p for net in (encoder, af, vf) if net is not None for p in net.parameters()]
    optimizer = torch.optim.Adam(params, lr=cfg.lr, fused=True)
    replay = _plain_replay(algo)
    size, batch_size = len(replay["obs"]), cfg.total_train_batch_size
    steps_per_update, clock = _steps_per_update(cfg), [0.0, 0.0]
    to = _to(next(module.parameters()).device)

    def q_values(obs, nets):
        hidden = nets[0](obs)
        advantages = nets[1](hidden)
        if nets[2] is None:
            return advantages
        return nets[2](hidden) + advantages - advantages.mean(-1, keepdim=True)

    def update():
        idx = torch.randint(size, (batch_size,))
        batch = {key: to(column[idx]) for key, column in replay.items()}
        obs, next_obs = batch["obs"], batch["new_obs"]
        q_both = q_values(torch.cat([obs, next_obs]), (encoder, af, vf))
        q, q_next = q_both[:batch_size], q_both[batch_size:]
        with torch.no_grad():
            q_target = q_values(next_obs, target)
            best = q_next.argmax(-1, keepdim=True) if cfg.double_q else q_target.argmax(-1, keepdim=True)
            y = batch["rewards"] + batch["discounts"] * q_target.gather(-1, best).squeeze(-1)
        q_taken = q.gather(-1, batch["actions"].long().unsqueeze(-1)).squeeze(-1)
        loss = F.huber_loss(q_taken, y) if cfg.td_error_loss_fn == "huber" else 0.5 * (q_taken - y).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        optimizer.step()
        clock[0] += steps_per_update
        if clock[0] - clock[1] >= cfg.target_network_update_freq:
            clock[1] = clock[0]
            with torch.no_grad():
                for main, copy_ in zip((encoder, af, vf), target):
                    if main is not None:
                        for p, t in zip(main.parameters(), copy_.parameters()):
                            t.lerp_(p, cfg.tau)
    return update


def plain_sac_loop(algo):
    """SAC for Box actions, written out: twin critics, tanh-Gaussian actor, learned alpha, Polyak targets."""
    from relayrl.algorithms.sac.sac_learner import resolve_target_entropy

    cfg = algo.config
    module = copy.deepcopy(algo.learner_group._learner.module["default_policy"])
    pi = torch.nn.Sequential(*module.pi_encoder, *module.pi)
    q1 = torch.nn.Sequential(*module.qf_encoder, *module.qf)
    q2 = torch.nn.Sequential(*module.qf_twin_encoder, *module.qf_twin)
    t1, t2 = copy.deepcopy(q1), copy.deepcopy(q2)
    device = next(module.parameters()).device
    to = _to(device)
    log_alpha = torch.zeros((), requires_grad=True, device=device)
    with torch.no_grad():
        log_alpha.fill_(float(torch.log(torch.tensor(cfg.initial_alpha))))
    target_entropy = resolve_target_entropy(module.action_space, cfg.target_entropy)
    optimizers = [torch.optim.Adam(q1.parameters(), lr=cfg.critic_lr, fused=True),
                  torch.optim.Adam(q2.parameters(), lr=cfg.critic_lr, fused=True),
                  torch.optim.Adam(pi.parameters(), lr=cfg.actor_lr, fused=True),
                  torch.optim.Adam([log_alpha], lr=cfg.alpha_lr, fused=True)]
    critic_params = list(q1.parameters()) + list(q2.parameters())
    target_params = list(t1.parameters()) + list(t2.parameters())
    replay = _plain_replay(algo)
    size, batch_size = len(replay["obs"]), cfg.total_train_batch_size

    def sample_action(obs):
        mean, log_std = pi(obs).chunk(2, -1)
        std = log_std.clamp(-20.0, 2.0).exp()
        u = mean + std * torch.randn_like(mean)
        logp = (torch.distributions.Normal(mean, std).log_prob(u)
                - 2.0 * (0.6931471805599453 - u - F.softplus(-2.0 * u))).sum(-1)
        return torch.tanh(u), logp

    def frozen_q(net, x):
        for layer in net:
            x = F.linear(x, layer.weight.detach(), layer.bias.detach()) if isinstance(layer, torch.nn.Linear) \
                else layer(x)
        return x.squeeze(-1)

    def update():
        idx = torch.randint(size, (batch_size,))
        batch = {key: to(column[idx]) for key, column in replay.items()}
        obs, actions, next_obs = batch["obs"], batch["actions"], batch["new_obs"]
        alpha = log_alpha.detach().exp()
        with torch.no_grad():
            next_actions, next_logp = sample_action(next_obs)
            x_next = torch.cat([next_obs, next_actions], -1)
            next_v = torch.min(t1(x_next), t2(x_next)).squeeze(-1) - alpha * next_logp
            y = batch["rewards"] + batch["discounts"] * next_v
        x = torch.cat([obs, actions], -1)
        critic_loss = sum(F.huber_loss(q(x).squeeze(-1), y) if cfg.td_error_loss_fn == "huber"
                          else 0.5 * (q(x).squeeze(-1) - y).pow(2).mean() for q in (q1, q2))
        new_actions, logp = sample_action(obs)
        x_new = torch.cat([obs, new_actions], -1)
        actor_loss = (alpha * logp - torch.min(frozen_q(q1, x_new), frozen_q(q2, x_new))).mean()
        alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
        for optimizer in optimizers:
            optimizer.zero_grad(set_to_none=True)
        (critic_loss + actor_loss + alpha_loss).backward()
        for optimizer in optimizers:
            optimizer.step()
        with torch.no_grad():
            torch._foreach_lerp_(target_params, critic_params, cfg.tau)
    return update


def relayrl_loop(algo):
    cfg = algo.config
    steps_per_update = _steps_per_update(cfg)
    counters = algo._counters

    deferred = hasattr(algo.learner_group, "reduce_results")  # older relayrl reduces per update (before/after runs)
    kwargs = {"reduce_metrics": False} if deferred else {}

    def update():  # what DQN.training_step runs per learner update; the targets' clock advances as in training
        counters[NUM_ENV_STEPS_SAMPLED_LIFETIME] = counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0) + steps_per_update
        algo.update_from_replay_buffer(**kwargs)
    if deferred:  # the Learner's metrics are reduced once per iteration (DQN._compile_result): once per window here
        update.end_of_window = algo.learner_group.reduce_results
    return update


def updates_vs_plain_torch(algo_name: str, updates: int = 300, repeats: int = 3, clock=time.perf_counter,
                           device: str = "cpu", compile_what=None, replay: str = "default") -> dict:
    """Updates/s of relayrl's DQN or SAC update (relayrl's defaults: CartPole-v1 / Pendulum-v1) and of the plain
    torch loop, alternating windows of `updates` updates, best window each. With `compile_what`, also relayrl
    with torch_compile_learner (that what_to_compile), and the seconds its first update took (the compile)."""
    torch.set_num_threads(1)
    algo = _build(algo_name, device=device, replay=replay)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    loops = {"relayrl": relayrl_loop(algo),
             "plain_torch": plain_dqn_loop(algo) if algo_name == "DQN" else plain_sac_loop(algo)}
    first_update_s, best = {}, {name: float("inf") for name in ("relayrl", "plain_torch", "relayrl_compiled")}
    if compile_what:
        compiled = _build(algo_name, device=device, compile_what=compile_what)
        loops["relayrl_compiled"] = relayrl_loop(compiled)
    for name, loop in loops.items():  # warm-up (first steps build optimizer state; the compiled loop compiles)
        start = time.perf_counter()
        loop()
        first_update_s[name] = time.perf_counter() - start
        for _ in range(20):
            loop()
    for _ in range(repeats):
        for name, loop in loops.items():
            sync()
            start = clock()
            for _ in range(updates):
                loop()
            getattr(loop, "end_of_window", lambda: None)()
            sync()
            best[name] = min(best[name], clock() - start)
    cfg = algo.config
    algo.stop()
    result = {"algo": algo_name, "device": device, "replay": replay, "batch_size": cfg.total_train_batch_size,
              "model": cfg.model_config.get("fcnet_hiddens"),
              "relayrl_updates_per_s": updates / best["relayrl"],
              "plain_torch_updates_per_s": updates / best["plain_torch"]}
    if compile_what:
        compiled.stop()
        result.update(compile=compile_what, relayrl_compiled_updates_per_s=updates / best["relayrl_compiled"],
                      compiled_first_update_s=round(first_update_s["relayrl_compiled"], 1),
                      compiled_vs_eager=best["relayrl"] / best["relayrl_compiled"])
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algo", choices=("DQN", "SAC", "both"), default="both")
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--compile", choices=("forward_train", "complete_update"), default=None,
                        help="also time relayrl with torch_compile_learner (this what_to_compile)")
    parser.add_argument("--replay", choices=("default", "uniform", "prioritized"), default="default",
                        help="relayrl's replay: its default (DQN prioritized, SAC uniform), uniform "
                             "(EpisodeReplayBuffer, the plain loop's kind) or prioritized (RLlib's default)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for name in (("DQN", "SAC") if args.algo == "both" else (args.algo,)):
        result = updates_vs_plain_torch(name, args.updates, args.repeats, clock, args.device, args.compile,
                                        args.replay)
        result["ratio"] = result["relayrl_updates_per_s"] / result["plain_torch_updates_per_s"]
        print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
