"""`observation_filter="MeanStdFilter"` on observations it cannot take as they come (Discrete, Dict): it follows the
user's FlattenObservations, or the build names that fix."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.connectors.builders import build_env_to_module_pipeline
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter

DICT = gym.spaces.Dict({"flag": gym.spaces.Discrete(2), "position": gym.spaces.Box(-1, 1, (2,), np.float32)})
SPACES = {"__env_single__": (DICT, gym.spaces.Discrete(2))}


def _config(connector=None):
    return PPOConfig().env_runners(observation_filter="MeanStdFilter", env_to_module_connector=connector)


def test_the_filter_follows_the_users_flatten_observations():
    pipeline = build_env_to_module_pipeline(_config(lambda env, spaces, device: FlattenObservations()), spaces=SPACES)
    names = [type(piece).__name__ for piece in pipeline.connectors]
    assert names[:2] == ["FlattenObservations", "MeanStdFilter"]
    assert pipeline[MeanStdFilter][0].observation_space.shape == (4,)  # the one-hot flag and the position


def test_without_flatten_observations_the_error_names_it():
    with pytest.raises(ValueError, match=r"observations are Dict.*FlattenObservations\(\)"):
        build_env_to_module_pipeline(_config(), spaces=SPACES)


def test_vector_observations_keep_the_filter_first():
    box = {"__env_single__": (gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(2))}
    pipeline = build_env_to_module_pipeline(_config(lambda env, spaces, device: FlattenObservations()), spaces=box)
    assert [type(piece).__name__ for piece in pipeline.connectors][:2] == ["MeanStdFilter", "FlattenObservations"]
