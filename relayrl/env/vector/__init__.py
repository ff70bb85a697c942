"""RLlib's `ray.rllib.env.vector`: vectorized multi-agent envs."""
from relayrl.env.vector.vector_multi_agent_env import VectorMultiAgentEnv

__all__ = ["VectorMultiAgentEnv"]
