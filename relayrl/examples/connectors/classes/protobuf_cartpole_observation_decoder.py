"""`ProtobufCartPoleObservationDecoder` (RLlib's example piece): an env-to-module piece that decodes the protobuf
bytes of `CartPoleWithProtobufObservationSpace` into CartPole's 4 floats, in the episode (so the Learner trains
on the decoded observations too):

    config.env_runners(env_to_module_connector=lambda env, spaces, device: ProtobufCartPoleObservationDecoder())
"""
import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.examples.envs.classes.utils.cartpole_observations_proto import FIELDS, CartPoleObservation


class ProtobufCartPoleObservationDecoder(ConnectorV2):
    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        space = input_observation_space
        if not (isinstance(space, gym.spaces.Box) and len(space.shape) == 1 and space.dtype == np.uint8):
            raise ValueError(f"{type(self).__name__} decodes protobuf bytes: its input must be a 1-D uint8 Box, "
                             f"got {space}.")
        return gym.spaces.Box(-np.inf, np.inf, (len(FIELDS),), np.float32)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes):
            message = CartPoleObservation.FromString(episode.get_observations(-1).tobytes())
            decoded = np.array([getattr(message, name) for name in FIELDS], dtype=np.float32)
            episode.set_observations(new_data=decoded, at_indices=-1)
        return batch
