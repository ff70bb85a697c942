"""What the multi-agent env checks of every step cost the sampler (relayrl/env/multi_agent_env_checks.py).

    .venv/bin/python benchmarks/multi_agent_env_checks_cost.py [--envs 2] [--rounds 20] [--seconds 1]

One MultiAgentEnvRunner samples two-agent CartPole (two policies, PPO's default module, explore on), switching
between the per-step checks on and off (`env._checks`: the same objects, or none) every `--seconds` CPU seconds,
`--rounds` times each, alternating which goes first. In-process and interleaved, so the machine's other load
affects both alike. Prints the medians of agent steps per CPU second, their ratio and the median of each
round's ratio, and a `RESULT {json}` line.
"""
import argparse
import json
import statistics
import time


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per measurement")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from relayrl import PPOConfig
    from relayrl.env.multi_agent_env import make_multi_agent
    from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner

    config = (PPOConfig().environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 2})
              .env_runners(num_envs_per_env_runner=args.envs)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}"))
    runner = MultiAgentEnvRunner(config=config)
    runner.sample(num_timesteps=2000)  # warm up (and the first, full checks)
    checks = runner.env._checks
    figures = {"checks": [], "no_checks": []}

    def measure(name: str) -> None:
        runner.env._checks = checks if name == "checks" else None
        agent_steps, start = 0, time.process_time()
        while time.process_time() - start < args.seconds:
            agent_steps += sum(episode.agent_steps() for episode in runner.sample(num_timesteps=500))
        figures[name].append(agent_steps / (time.process_time() - start))

    for round_index in range(args.rounds):
        for name in (("checks", "no_checks") if round_index % 2 == 0 else ("no_checks", "checks")):
            measure(name)
    medians = {name: statistics.median(values) for name, values in figures.items()}
    paired = [a / b for a, b in zip(figures["checks"], figures["no_checks"])]  # each round's two share its load
    result = {"envs": args.envs, "agent_steps_per_cpu_s": figures, "median": medians,
              "ratio_checks_no_checks": medians["checks"] / medians["no_checks"],
              "median_of_round_ratios": statistics.median(paired)}
    print(f"agent steps per CPU second, {args.envs} envs: checks {medians['checks']:.0f}, no checks "
          f"{medians['no_checks']:.0f}, checks/no checks {result['ratio_checks_no_checks']:.3f} (median of the "
          f"rounds' ratios {result['median_of_round_ratios']:.3f})")
    print("RESULT " + json.dumps(result))
    return result


if __name__ == "__main__":
    main()
