"""Where a PPO iteration's time goes, each part beside its floor: the env alone, the network alone, a plain torch
loop of the same update.

    .venv/bin/python benchmarks/where_time_goes.py pong [--rounds 3]   # PPO ALE/Pong-v5, benchmarks/atari_ppo.py
    .venv/bin/python benchmarks/where_time_goes.py lstm [--rounds 3]   # PPO use_lstm=True, StatelessCartPole

Each part runs in turn, `--rounds` times (interleaved, so load hits them alike); the best round of each counts.
Figures are wall and CPU milliseconds per 1,000 env steps, so the parts add up to an iteration:

- env alone: the vector env relayrl samples with, stepped with random actions (ale-py's AtariVectorEnv for Pong,
  the floor of any sampler); for Pong also gymnasium's SYNC vector env of wrapped ALE envs;
- network alone: the module's forward pass on one vector step's observations (torch, no pipelines), as often as a
  sampler calls it;
- relayrl sample(): the EnvRunner (env, forward pass, connectors, episodes);
- update: relayrl's Learner (its connector pipeline and the update) and a plain torch loop of the same update on
  the same network and data (ready tensors: it does strictly less);
- iteration: `algo.train()` end to end.

Prints a table and one `RESULT {json}` line. Threads: relayrl's choice unless OMP_NUM_THREADS is set.
"""
import argparse
import copy
import json
import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))


def best_ms_per_1k(parts, rounds: int):
    """{name: (best wall ms, best CPU ms) per 1,000 env steps}; `parts` maps a name to (fn, env steps per call).
    CPU time is the process's (all its threads): on a machine shared with other jobs it moves less than wall time."""
    best = {name: [float("inf"), float("inf")] for name in parts}
    for _ in range(rounds):
        for name, (fn, steps) in parts.items():
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = [min(best[name][0], wall * 1e6 / steps), min(best[name][1], cpu * 1e6 / steps)]
    return {name: [round(ms, 1) for ms in pair] for name, pair in best.items()}


def pong_parts(rounds: int):
    import gymnasium as gym
    from atari_ppo import pong_ppo_config
    from gpu_learner_throughput import plain_batch, plain_update

    from relayrl.env.atari_vector_env import make_atari_vector_env
    from relayrl.env.wrappers.atari_wrappers import wrap_atari_for_new_api_stack

    envs, steps = 8, 128
    algo = pong_ppo_config(envs=envs).build_algo()
    runner, learner = algo.env_runner, algo.learner_group._learner
    native = make_atari_vector_env("ALE/Pong-v5", {"repeat_action_probability": 0.0}, envs)
    sync = gym.vector.SyncVectorEnv([lambda: wrap_atari_for_new_api_stack(
        gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0), dim=84, framestack=4)] * envs)
    for env in (native, sync):
        env.reset(seed=0)
    module = runner.module
    obs = torch.from_numpy(native.reset(seed=0)[0])

    def step_env(env):
        for _ in range(steps):
            env.step(env.action_space.sample())

    def forward_alone():
        with torch.no_grad():
            for _ in range(steps):
                module.forward_exploration({"obs": obs})

    episodes = runner.sample()
    rows = sum(len(e) for e in episodes)
    plain_module = copy.deepcopy(learner.module["default_policy"])
    optimizer = torch.optim.Adam(plain_module.parameters(), lr=algo.config.lr)
    data = plain_batch(episodes)
    parts = {
        "env alone: ale-py AtariVectorEnv (relayrl's default here)": (lambda: step_env(native), envs * steps),
        "env alone: SYNC, gymnasium's Atari wrappers": (lambda: step_env(sync), envs * steps),
        "network alone: CNN forward, 8 rows per call": (forward_alone, envs * steps),
        "relayrl sample()": (runner.sample, envs * steps),
        "update: relayrl Learner (pipeline + 4 epochs)": (
            lambda: algo.learner_group.update(episodes=episodes, timesteps={}), rows),
        "update: plain torch loop, same network and minibatches": (
            lambda: plain_update(plain_module, optimizer, data, torch.device("cpu")), rows),
        "iteration: algo.train()": (algo.train, algo.config.train_batch_size),
    }
    try:
        algo.train()  # warm-up
        return best_ms_per_1k(parts, rounds)
    finally:
        algo.stop()
        native.close()
        sync.close()


class PlainRecurrentActorCritic(torch.nn.Module):
    """The default stateful PPO module's shapes in plain torch: an LSTM each for the actor and the critic on the
    observation, a 64-unit relu layer after each, the logits and the value."""

    def __init__(self, obs_dim: int, num_actions: int, cell: int = 64, hidden: int = 64):
        super().__init__()
        self.actor_lstm = torch.nn.LSTM(obs_dim, cell, batch_first=True)
        self.critic_lstm = torch.nn.LSTM(obs_dim, cell, batch_first=True)
        self.pi = torch.nn.Sequential(torch.nn.Linear(cell, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, num_actions))
        self.vf = torch.nn.Sequential(torch.nn.Linear(cell, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))

    def forward(self, obs, actor_state, critic_state):
        actor, _ = self.actor_lstm(obs, actor_state)
        critic, _ = self.critic_lstm(obs, critic_state)
        return self.pi(actor), self.vf(critic).squeeze(-1)


def plain_lstm_update(net, optimizer, data, config):
    """PPO's update on whole sequences in plain torch: shuffled minibatches of sequences, masked means."""
    sequences = data["obs"].shape[0]
    per_minibatch = max(1, config.minibatch_size // data["obs"].shape[1])
    for _ in range(config.num_epochs):
        order = torch.randperm(sequences)
        for start in range(0, sequences - per_minibatch + 1, per_minibatch):
            idx = order[start:start + per_minibatch]
            states = [tuple(data[f"{part}_{leaf}"][idx].transpose(0, 1).contiguous() for leaf in ("h", "c"))
                      for part in ("actor", "critic")]
            logits, values = net(data["obs"][idx], *states)
            mask = data["mask"][idx]
            dist = torch.distributions.Categorical(logits=logits)
            ratio = torch.exp(dist.log_prob(data["actions"][idx]) - data["logp"][idx])
            adv = data["advantages"][idx]
            surrogate = torch.min(adv * ratio, adv * ratio.clamp(1 - config.clip_param, 1 + config.clip_param))
            per_step = -surrogate + config.vf_loss_coeff * (values - data["targets"][idx]) ** 2
            loss = (per_step * mask).sum() / mask.sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.grad_clip)
            optimizer.step()


def lstm_parts(rounds: int):
    import gymnasium as gym
    from gymnasium.wrappers import TimeLimit
    from recurrent_sweep import build_config

    from relayrl.testing import StatelessCartPole

    from relayrl.core.columns import Columns

    algo = build_config("PPO", "StatelessCartPole-v1", 0, {}, model_dict=False).build_algo()  # use_lstm=True only
    config, runner, learner = algo.config, algo.env_runner, algo.learner_group._learner
    envs, steps = config.num_envs_per_env_runner, config.rollout_fragment_length
    env = gym.vector.SyncVectorEnv([lambda: TimeLimit(StatelessCartPole(), max_episode_steps=500)] * envs)
    env.reset(seed=0)
    module = runner.module
    state = module.get_initial_state()
    obs = torch.zeros((envs, 1, env.single_observation_space.shape[0]))
    state_in = {part: {k: torch.from_numpy(v).repeat(envs, 1, 1) for k, v in leaves.items()}
                for part, leaves in state.items()}

    def step_env():
        for _ in range(steps):
            env.step(env.action_space.sample())

    def forward_alone():
        with torch.no_grad():
            for _ in range(steps):
                module.forward_exploration({Columns.OBS: obs, Columns.STATE_IN: state_in})

    episodes = [e for _ in range(config.train_batch_size // (envs * steps)) for e in runner.sample()]
    rows = sum(len(e) for e in episodes)
    batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=list(episodes), explore=False,
                                       shared_data={}, metrics=learner.metrics)["default_policy"]
    data = {"obs": batch[Columns.OBS], "mask": batch[Columns.LOSS_MASK].float(), "actions": batch[Columns.ACTIONS],
            "logp": batch[Columns.ACTION_LOGP], "advantages": batch[Columns.ADVANTAGES],
            "targets": batch[Columns.VALUE_TARGETS]}
    for part in ("actor", "critic"):
        for leaf in ("h", "c"):
            data[f"{part}_{leaf}"] = batch[Columns.STATE_IN][part][leaf]
    net = PlainRecurrentActorCritic(data["obs"].shape[-1], int(env.single_action_space.n))
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    parts = {
        "env alone: SYNC vector env of StatelessCartPole": (step_env, envs * steps),
        "network alone: LSTM forward (actor and critic), 8 rows per call": (forward_alone, envs * steps),
        "relayrl sample()": (runner.sample, envs * steps),
        "update: relayrl Learner (pipeline + 10 epochs)": (
            lambda: algo.learner_group.update(episodes=list(episodes), timesteps={}), rows),
        "update: plain torch loop, same shapes and minibatches": (
            lambda: plain_lstm_update(net, optimizer, data, config), rows),
        "iteration: algo.train()": (algo.train, config.train_batch_size),
    }
    try:
        algo.train()  # warm-up
        return best_ms_per_1k(parts, rounds)
    finally:
        algo.stop()
        env.close()


TASKS = {"pong": pong_parts, "lstm": lstm_parts}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    ms = TASKS[args.task](args.rounds)
    print(f"\n| {args.task}: part | wall ms per 1,000 env steps | CPU ms |\n|---|---|---|")
    for name, (wall, cpu) in ms.items():
        print(f"| {name} | {wall:,.1f} | {cpu:,.1f} |")
    print("RESULT " + json.dumps({"task": args.task, "torch_threads": torch.get_num_threads(), "ms_per_1k": ms}))


if __name__ == "__main__":
    main()
