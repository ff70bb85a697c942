"""The MultiAgentEnvRunner's sampling speed at two versions of relayrl, measured in one run: before/after a change.

    .venv/bin/python benchmarks/multi_agent_sampler_ab.py --before /tmp/relayrl_base [--after .] [--envs 2]
        [--rounds 6] [--seconds 3]

`--before` / `--after` are source trees (e.g. `git archive main | tar -x -C /tmp/relayrl_base`). Each round runs
one fresh interpreter per tree, alternating which goes first; each samples two-agent CartPole (two policies,
PPO's default module, explore on) and reports agent steps per second of its own CPU time (process time: on a
machine shared with other jobs, wall time mostly measures their load). Prints each round, the medians and the
after/before ratio, and a `RESULT {json}` line.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
sys.path.insert(0, {tree!r})
import relayrl
assert relayrl.__file__.startswith({tree!r}), relayrl.__file__
import torch
torch.set_num_threads(1)
from relayrl import PPOConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner

config = (PPOConfig().environment(make_multi_agent("CartPole-v1"), env_config={{"num_agents": 2}})
          .env_runners(num_envs_per_env_runner={envs})
          .multi_agent(policies={{"p0", "p1"}}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{{agent_id}}"))
runner = MultiAgentEnvRunner(config=config)
runner.sample(num_timesteps=2000)  # warm up
agent_steps, start = 0, time.process_time()
while time.process_time() - start < {seconds}:
    agent_steps += sum(episode.agent_steps() for episode in runner.sample(num_timesteps=2000))
print(json.dumps(agent_steps / (time.process_time() - start)))
"""


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default=str(pathlib.Path(__file__).resolve().parents[1]))
    parser.add_argument("--envs", type=int, default=2, help="num_envs_per_env_runner (RLlib's tuned example: 2)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds each interpreter samples")
    args = parser.parse_args(argv)
    trees = {"before": str(pathlib.Path(args.before).resolve()), "after": str(pathlib.Path(args.after).resolve())}
    figures = {name: [] for name in trees}
    for round_index in range(args.rounds):
        order = list(trees) if round_index % 2 == 0 else list(reversed(list(trees)))
        for name in order:
            code = CHILD.format(tree=trees[name], envs=args.envs, seconds=args.seconds)
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
            if proc.returncode != 0:
                raise SystemExit(f"{name} ({trees[name]}) failed:\n{proc.stderr[-3000:]}")
            figures[name].append(float(proc.stdout.strip().splitlines()[-1]))
        print(f"round {round_index + 1}: " + ", ".join(f"{n} {figures[n][-1]:.0f}" for n in trees), flush=True)
    medians = {name: statistics.median(values) for name, values in figures.items()}
    result = {"envs": args.envs, "agent_steps_per_cpu_s": figures, "median": medians,
              "ratio_after_before": medians["after"] / medians["before"]}
    print(f"agent steps per CPU second, {args.envs} envs: before {medians['before']:.0f}, after {medians['after']:.0f}, "
          f"after/before {result['ratio_after_before']:.3f}")
    print("RESULT " + json.dumps(result))
    return result


if __name__ == "__main__":
    main()
