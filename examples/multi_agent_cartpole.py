"""Multi-agent CartPole, as RLlib's `rllib/examples/multi_agent/multi_agent_cartpole.py`: `--num-agents` CartPoles
side by side, one policy per agent (`p0`, `p1`, ...), any algorithm that trains multi-agent configs.

    python examples/multi_agent_cartpole.py --num-agents 2                  # PPO
    python examples/multi_agent_cartpole.py --num-agents 2 --algo IMPALA    # also APPO, DQN
    python examples/multi_agent_cartpole.py --num-agents 3 --shared-policy  # one policy for every agent

The stop reward is the episode return summed over the agents (RLlib's `env_runners/episode_return_mean`).
"""
import argparse

from relayrl.algorithms.registry import get_config_class
from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rllib_example_script_args(parser, default_reward=600.0, default_iters=200, default_timesteps=100_000)
    parser.set_defaults(no_tune=True, num_agents=2)  # train in this process (RLlib's default is Ray Tune)
    parser.add_argument("--shared-policy", action="store_true", help="one policy that every agent maps to")
    args = parser.parse_args(argv)
    if args.num_agents < 1:
        parser.error("--num-agents must be at least 1")

    if args.shared_policy:
        policies, mapping = {"shared"}, (lambda agent_id, episode, **kwargs: "shared")
    else:
        policies = {f"p{i}" for i in range(args.num_agents)}
        mapping = lambda agent_id, episode, **kwargs: f"p{agent_id}"  # noqa: E731 (RLlib's example's lambda)
    config = (
        get_config_class(args.algo)()
        .environment(MultiAgentCartPole, env_config={"num_agents": args.num_agents})
        .multi_agent(policies=policies, policy_mapping_fn=mapping)
        .debugging(seed=args.seed)
    )
    return run_rllib_example_script_experiment(config, args)


if __name__ == "__main__":
    main()
