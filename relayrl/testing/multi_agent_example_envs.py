"""The multi-agent example envs RLlib's scripts import (`ray.rllib.examples.envs.classes.multi_agent`), for relayrl.

As RLlib's, each is `make_multi_agent(...)` of a single-agent env: `num_agents` copies (env_config
`{"num_agents": n}`, default 1) stepping side by side, agent ids 0..n-1; an agent whose copy ends stops acting,
the episode ends when every copy has.
"""
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.example_envs import CartPoleWithDictObservationSpace, StatelessCartPole

# Each class is named by RLlib's path, where it can be imported back: a config holding it is stored in checkpoints
# by that name (relayrl/checkpoints/nameable.py lists it), and Ray pickles it by reference.
_PATH = "relayrl.examples.envs.classes.multi_agent"


def _named(cls, name: str):
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = _PATH
    return cls


MultiAgentCartPole = _named(make_multi_agent("CartPole-v1"), "MultiAgentCartPole")
MultiAgentMountainCar = _named(make_multi_agent("MountainCarContinuous-v0"), "MultiAgentMountainCar")
MultiAgentPendulum = _named(make_multi_agent("Pendulum-v1"), "MultiAgentPendulum")
MultiAgentStatelessCartPole = _named(make_multi_agent(lambda config: StatelessCartPole(config)),
                                     "MultiAgentStatelessCartPole")
MultiAgentCartPoleWithDictObservationSpace = _named(
    make_multi_agent(lambda config: CartPoleWithDictObservationSpace(config)),
    "MultiAgentCartPoleWithDictObservationSpace")

__all__ = ["MultiAgentCartPole", "MultiAgentCartPoleWithDictObservationSpace", "MultiAgentMountainCar",
           "MultiAgentPendulum", "MultiAgentStatelessCartPole"]
