"""The cost of multi-agent bookkeeping: agent steps/s of the MultiAgentEnvRunner on two-agent CartPole
against the single-agent EnvRunner's env steps/s on CartPole, same number of envs (8), default PPO module,
explore on, in interleaved windows of one process (a drift in the machine's speed moves both alike).

    .venv/bin/python benchmarks/multi_agent_sampler.py [--seconds 2] [--windows 5] [--clock wall|cpu]

`--clock cpu` times each window in this process's CPU seconds (it runs single-threaded): on a machine
shared with other jobs the wall clock counts the time spent waiting for a core. Prints a table and a `RESULT {json}` line; the issue's bar is a ratio of at least 0.70.
"""
import argparse
import json
import time

import torch

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def single_agent_meter(num_envs: int):
    from relayrl import PPOConfig
    from relayrl.env.env_runner import EnvRunner

    runner = EnvRunner(config=PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=num_envs))
    runner.sample(num_timesteps=4000)

    def meter(seconds: float) -> float:
        n, start = 0, clock()
        while clock() - start < seconds:
            n += sum(len(e) for e in runner.sample(num_timesteps=4000))
        return n / (clock() - start)
    return meter


def multi_agent_meter(num_envs: int, shared: bool):
    from relayrl import PPOConfig
    from relayrl.env.multi_agent_env import make_multi_agent
    from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner

    policies = {"shared"} if shared else {"p0", "p1"}

    def mapping(agent_id, episode, **kwargs):
        return "shared" if shared else f"p{agent_id}"

    config = (PPOConfig().environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 2})
              .env_runners(num_envs_per_env_runner=num_envs)
              .multi_agent(policies=policies, policy_mapping_fn=mapping))
    runner = MultiAgentEnvRunner(config=config)
    runner.sample(num_timesteps=2000)

    def meter(seconds: float) -> float:
        n, start = 0, clock()
        while clock() - start < seconds:
            n += sum(e.agent_steps() for e in runner.sample(num_timesteps=2000))
        return n / (clock() - start)
    return meter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    torch.set_num_threads(1)
    meters = {"single_agent_env_sps": single_agent_meter(args.num_envs),
              "two_policies_agent_sps": multi_agent_meter(args.num_envs, shared=False),
              "shared_policy_agent_sps": multi_agent_meter(args.num_envs, shared=True)}
    rates = {name: [] for name in meters}
    for _ in range(args.windows):
        for name, meter in meters.items():
            rates[name].append(meter(args.seconds))
    median = {name: sorted(r)[len(r) // 2] for name, r in rates.items()}
    base = median["single_agent_env_sps"]
    for name, value in median.items():
        print(f"{name:<28}{value:>12,.0f}{value / base:>8.2f}")
    print("RESULT " + json.dumps({"median": median, "windows": rates,
                                  "ratio_two_policies": median["two_policies_agent_sps"] / base,
                                  "ratio_shared": median["shared_policy_agent_sps"] / base}))


if __name__ == "__main__":
    main()
