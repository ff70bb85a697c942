"""The example envs RLlib's example scripts import (`ray.rllib.examples.envs.classes...`), by their old relayrl path.

They live at RLlib's paths, `relayrl/examples/envs/classes/` (outside relayrl.testing, so a checkpoint may name
them: relayrl/checkpoints/nameable.py). RLlib's multi-agent ones, MultiAgentCartPole and others, are in
relayrl/testing/multi_agent_example_envs.py.
"""
from relayrl.examples.envs.classes.action_mask_env import ActionMaskEnv
from relayrl.examples.envs.classes.cartpole_with_dict_observation_space import CartPoleWithDictObservationSpace
from relayrl.examples.envs.classes.random_env import RandomEnv
from relayrl.examples.envs.classes.simple_corridor import SimpleCorridor
from relayrl.examples.envs.classes.stateless_cartpole import StatelessCartPole

__all__ = ["SimpleCorridor", "StatelessCartPole", "CartPoleWithDictObservationSpace", "RandomEnv", "ActionMaskEnv"]
