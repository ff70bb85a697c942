"""relayrl's own speed figures, each measured in this process (or a fresh subprocess) on this machine."""
import copy
import json
import pathlib
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import torch

HERE = pathlib.Path(__file__).parent


def raw_limits(seconds: float = 2.0) -> dict:
    """Raw gymnasium CartPole stepping (one env) and a 64x64 MLP forward (batch 8). The sync vector
    env of 8 is measured with the sampler, in `sampling_figures`."""
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(1000):
            _, _, term, trunc, _ = env.step(i & 1)
            if term or trunc:
                env.reset()
        n += 1000
    single = n / (time.perf_counter() - start)
    torch.set_num_threads(1)
    net = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                              torch.nn.Linear(64, 2))
    x = torch.zeros(8, 4)
    with torch.inference_mode():
        start = time.perf_counter()
        for _ in range(20000):
            net(x)
        fwd = 20000 / (time.perf_counter() - start)
    return {"single_env_sps": single, "mlp_fwd_per_s": fwd}


def sampling_figures(seconds: float = 3.0, rounds: int = 5) -> dict:
    """Env steps/s of the raw sync vector env of 8 (`vec8_sps`), relayrl's EnvRunner three ways and
    the two bare-loop floors, measured in `rounds` interleaved windows of `seconds / rounds` each:
    on a shared machine whose speed drifts, all of them see the same drift. Each figure is the
    median of its windows."""
    torch.set_num_threads(1)
    meters = {
        "vec8_sps": _vec8_meter(),
        "sampler_sps": _sampler_meter(),
        "sampler_torch_path_sps": _sampler_meter(numpy_inference=False),
        "sampler_general_path_sps": _sampler_meter(custom_piece=True),
        "sampler_floor_sps": _floor_meter("torch"),
        "sampler_numpy_floor_sps": _floor_meter("numpy"),
    }
    windows = {name: [] for name in meters}
    for _ in range(rounds):
        for name, meter in meters.items():
            windows[name].append(meter(seconds / rounds))
    return {name: float(np.median(rates)) for name, rates in windows.items()}


def _vec8_meter():
    """Raw gymnasium stepping: a sync vector env of 8 CartPole-v1 (gymnasium's defaults), random actions."""
    venv = gym.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync")
    venv.reset(seed=0)
    actions = np.zeros(8, dtype=np.int64)

    def meter(seconds: float) -> float:
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(200):
                venv.step(actions ^ (np.random.rand(8) < 0.5))
            n += 1600
        return n / (time.perf_counter() - start)
    meter(0.1)  # warm-up
    return meter


def _sampler_meter(custom_piece: bool = False, numpy_inference: bool = True):
    """EnvRunner env steps/s: CartPole-v1, 8 envs, the default PPO module, explore on.

    With `custom_piece`, a user env-to-module piece that touches every episode is added, which puts
    the pipeline on the general (per-episode) path. `numpy_inference=False` computes the actions with
    the torch module instead of numpy views of its weights (relayrl/env/sampling/numpy_actions.py).
    """
    from relayrl import ConnectorV2, PPOConfig
    from relayrl.env.env_runner import EnvRunner

    class TouchEveryEpisode(ConnectorV2):
        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            for episode in self.single_agent_episode_iterator(episodes):
                episode.get_observations(-1)
            return batch

    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_envs_per_env_runner=8, numpy_inference=numpy_inference))
    if custom_piece:
        config.env_runners(env_to_module_connector=lambda env, spaces, device: TouchEveryEpisode())
    runner = EnvRunner(config=config)
    runner.sample(num_timesteps=4000)  # warm-up

    def meter(seconds: float) -> float:
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:  # 4000 steps a call: the default PPO iteration's sample
            n += sum(len(e) for e in runner.sample(num_timesteps=4000))
        return n / (time.perf_counter() - start)
    return meter


def _floor_meter(network: str, rollout: int = 500):
    """The sampler's floor: the same work as the EnvRunner's written as one bare loop, with none of the
    architecture (no episodes, connectors, RLModule or metrics).

    Same env (CartPole-v1, sync vector env of 8, same-step autoreset), the default PPO policy network
    (4-64-64-2, tanh) called as torch functions (`network="torch"`) or as numpy matmuls (`"numpy"`,
    as relayrl's numpy inference does), Gumbel-max sampling with log-probs, and per-step columns
    written into preallocated numpy arrays. It is the floor for a sampler built on gymnasium's vector
    env and that network; what relayrl adds on top of it is the architecture's cost.
    """
    from gymnasium.vector import AutoresetMode

    venv = gym.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
    obs = venv.reset(seed=0)[0]
    sizes = [4, 64, 64, 2]
    layers = [torch.nn.Linear(i, o) for i, o in zip(sizes, sizes[1:])]
    act = _torch_actions(layers) if network == "torch" else _numpy_actions(layers)

    def one_rollout():
        nonlocal obs
        observations = np.empty((rollout + 1, 8, 4), np.float32)
        actions, logps = np.empty((rollout, 8), np.int64), np.empty((rollout, 8), np.float32)
        rewards, dones = np.empty((rollout, 8)), np.empty((rollout, 8), bool)
        observations[0] = obs
        with torch.inference_mode():
            for t in range(rollout):
                action, logp = act(obs)
                actions[t], logps[t] = action, logp
                obs, rewards[t], terminated, truncated, _ = venv.step(action)
                observations[t + 1], dones[t] = obs, terminated | truncated

    def meter(seconds: float) -> float:
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            one_rollout()
            n += rollout * 8
        return n / (time.perf_counter() - start)
    one_rollout()  # warm-up
    return meter


def _torch_actions(layers):
    from torch.nn import functional as F

    (w1, b1), (w2, b2), (w3, b3) = [(layer.weight.detach(), layer.bias.detach()) for layer in layers]

    def act(obs):
        logits = F.linear(torch.tanh(F.linear(torch.tanh(F.linear(torch.from_numpy(obs), w1, b1)), w2, b2)), w3, b3)
        action = torch.argmax(logits - torch.empty_like(logits).exponential_().log_(), dim=-1)
        logp = torch.log_softmax(logits, dim=-1).gather(-1, action.unsqueeze(-1)).squeeze(-1)
        return action.numpy(), logp.numpy()
    return act


def _numpy_actions(layers):
    """relayrl's numpy policy itself (the same matmuls, sampling and log-probs), called bare."""
    from relayrl.core.columns import Columns
    from relayrl.env.sampling.numpy_actions import NumpyCategoricalPolicy
    from relayrl.modules.numpy_forward import NumpyMLP

    activations = [np.tanh, np.tanh, None]
    policy = NumpyCategoricalPolicy(NumpyMLP([(layer.weight.detach().numpy().T, layer.bias.detach().numpy(), activation)
                                               for layer, activation in zip(layers, activations)]),
                                    np.random.default_rng(0))

    def act(obs):
        out = policy(obs, True)
        return out[Columns.ACTIONS], out[Columns.ACTION_LOGP]
    return act


def startup_s(repeats: int = 3) -> float:
    """Seconds from `import relayrl` to the first train() result, default PPO config on CartPole (best of N)."""
    code = ("import time; t = time.perf_counter(); import relayrl; "
            "algo = relayrl.PPOConfig().environment('CartPole-v1').build_algo(); algo.train(); "
            "print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                  .stdout.strip().splitlines()[-1]) for _ in range(repeats)]
    return min(runs)


def solve_cartpole(seed: int = 0, settings: str = "tuned") -> dict:
    """PPO CartPole-v1 to mean return 450 with relayrl's tuned CartPole settings (or its defaults), timed
    from interpreter start: `wall_s` runs from launching `python` to the iteration that reached the bar
    (interpreter start-up and imports included; the run's shutdown after it is not)."""
    start = time.time()
    out = subprocess.run([sys.executable, str(HERE / "solve_cartpole.py"), str(seed), "--settings", settings],
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out.split("RESULT ", 1)[1])
    result["wall_s"] = result["reached_at"] - start
    return result


def learner_vs_plain_torch(repeats: int = 3) -> dict:
    """Minibatch updates/s of relayrl's PPO Learner vs a plain torch loop: same network, batch, minibatches."""
    from relayrl import PPOConfig
    from relayrl.core.columns import DEFAULT_MODULE_ID, Columns

    torch.set_num_threads(1)
    algo = PPOConfig().environment("CartPole-v1").debugging(seed=0).build_algo()
    learner = algo.learner_group._learner
    episodes = algo.env_runner.sample(num_timesteps=algo.config.total_train_batch_size)
    batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes, shared_data={})
    batch = learner._as_module_batch(batch)  # as update() trains: tensors, only rows inside the loss
    cfg = algo.config
    n_rows = len(batch[DEFAULT_MODULE_ID][Columns.OBS])
    updates = cfg.num_epochs * (n_rows // cfg.minibatch_size)

    def relayrl_update():
        learner.update(batch=batch, timesteps={"num_env_steps_sampled_lifetime": 0})

    module = copy.deepcopy(learner.module[DEFAULT_MODULE_ID])
    # The same fused Adam kernel relayrl uses, so the comparison measures framework overhead only.
    optimizer = torch.optim.Adam(module.parameters(), lr=cfg.lr, fused=True)
    data = batch[DEFAULT_MODULE_ID]

    def plain_update():
        for _ in range(cfg.num_epochs):
            order = torch.randperm(n_rows)
            for start in range(0, n_rows - cfg.minibatch_size + 1, cfg.minibatch_size):
                idx = order[start:start + cfg.minibatch_size]
                obs = data[Columns.OBS][idx]
                emb = module.encoder(obs)
                logp_all = torch.log_softmax(module.pi(emb), -1)
                vf_emb = emb if module.vf_share_layers else module.vf_encoder(obs)
                logp = logp_all.gather(-1, data[Columns.ACTIONS][idx].long().unsqueeze(-1)).squeeze(-1)
                ratio = torch.exp(logp - data[Columns.ACTION_LOGP][idx])
                adv = data[Columns.ADVANTAGES][idx]
                surrogate = torch.min(adv * ratio, adv * ratio.clamp(1 - cfg.clip_param, 1 + cfg.clip_param))
                values = module.vf(vf_emb).squeeze(-1)
                vf_loss = (values - data[Columns.VALUE_TARGETS][idx]).pow(2).clamp(0, cfg.vf_clip_param)
                probs = logp_all.exp()
                entropy = -(probs * logp_all).sum(-1)
                per_row = -surrogate + cfg.vf_loss_coeff * vf_loss - cfg.entropy_coeff * entropy
                if cfg.use_kl_loss:
                    prev_logp_all = torch.log_softmax(data[Columns.ACTION_DIST_INPUTS][idx], -1)
                    per_row = per_row + cfg.kl_coeff * (prev_logp_all.exp() * (prev_logp_all - logp_all)).sum(-1)
                loss = per_row.mean()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if cfg.grad_clip is not None:
                    torch.nn.utils.clip_grad_norm_(module.parameters(), cfg.grad_clip)
                optimizer.step()

    def best_of(fn):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    relayrl_s, plain_s = best_of(relayrl_update), best_of(plain_update)
    algo.stop()
    return {"minibatch_updates": updates, "relayrl_updates_per_s": updates / relayrl_s,
            "plain_torch_updates_per_s": updates / plain_s}
