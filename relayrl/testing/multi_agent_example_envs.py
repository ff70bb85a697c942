"""The multi-agent example envs RLlib's scripts import (`ray.rllib.examples.envs.classes.multi_agent`), for relayrl.

As RLlib's, each is `make_multi_agent(...)` of a single-agent env: `num_agents` copies (env_config
`{"num_agents": n}`, default 1) stepping side by side, agent ids 0..n-1; an agent whose copy ends stops acting,
the episode ends when every copy has.
"""
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.example_envs import CartPoleWithDictObservationSpace, StatelessCartPole

MultiAgentCartPole = make_multi_agent("CartPole-v1")
MultiAgentMountainCar = make_multi_agent("MountainCarContinuous-v0")
MultiAgentPendulum = make_multi_agent("Pendulum-v1")
MultiAgentStatelessCartPole = make_multi_agent(lambda config: StatelessCartPole(config))
MultiAgentCartPoleWithDictObservationSpace = make_multi_agent(lambda config: CartPoleWithDictObservationSpace(config))

__all__ = ["MultiAgentCartPole", "MultiAgentCartPoleWithDictObservationSpace", "MultiAgentMountainCar",
           "MultiAgentPendulum", "MultiAgentStatelessCartPole"]
