"""`CartPoleWithProtobufObservationSpace` (RLlib's example env): CartPole whose observations are serialized
protobuf messages (`CartPoleObservation`), as a simulator publishing protobuf would send them: a `Box(0, 255,
(n,), uint8)` of the message's bytes. A connector piece decodes them for the module
(relayrl/examples/connectors/classes/protobuf_cartpole_observation_decoder.py).
"""
import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv

from relayrl.examples.envs.classes.utils.cartpole_observations_proto import FIELDS, CartPoleObservation


def encode(observation) -> np.ndarray:
    """CartPole's 4 floats -> the uint8 bytes of a CartPoleObservation message."""
    message = CartPoleObservation(**{name: float(value) for name, value in zip(FIELDS, observation)})
    return np.frombuffer(message.SerializeToString(), dtype=np.uint8)


class CartPoleWithProtobufObservationSpace(CartPoleEnv):
    def __init__(self, config=None):
        super().__init__()
        size = len(encode(np.zeros(4)))  # every message has the same length (its fields are always written)
        self.observation_space = gym.spaces.Box(0, 255, (size,), np.uint8)

    def reset(self, *, seed=None, options=None):
        observation, info = super().reset(seed=seed, options=options)
        return encode(observation), info

    def step(self, action):
        observation, reward, terminated, truncated, info = super().step(action)
        return encode(observation), reward, terminated, truncated, info
