"""`VectorMultiAgentEnv` (RLlib's `ray.rllib.env.vector.vector_multi_agent_env`): the base class of vectorized
multi-agent envs, `num_envs` MultiAgentEnvs stepped together with one {agent_id: ...} dict per sub-env.

relayrl's multi-agent EnvRunner steps a `MultiAgentVectorEnv` (relayrl/env/multi_agent_vector_env.py), which is
one; `isinstance(env.unwrapped, VectorMultiAgentEnv)` tells a callback that `env.envs[i]` are the sub-envs.
"""
from typing import Any, List


class VectorMultiAgentEnv:
    """`num_envs` sub-envs (`envs`), their agents (`possible_agents`) and per-sub-env spaces (Dicts by agent id:
    `single_observation_space`, `single_action_space`)."""

    num_envs: int
    envs: List[Any]
    possible_agents: List[Any]
    single_observation_space: Any
    single_action_space: Any

    @property
    def unwrapped(self) -> "VectorMultiAgentEnv":
        return self

    def reset(self, *, seed=None, options=None):
        raise NotImplementedError

    def step(self, actions):
        raise NotImplementedError

    def close(self) -> None:
        for env in getattr(self, "envs", ()):
            env.close()
