"""FlattenObservations: discrete and nested observations -> flat float32, in the episodes (both sides)."""
import gymnasium as gym
import numpy as np
from connector_test_utils import make_episode, reset_episode

from relayrl import PPOConfig
from relayrl.connectors import FlattenObservations
from relayrl.core.columns import Columns

DICT = gym.spaces.Dict({"cell": gym.spaces.Discrete(3), "pos": gym.spaces.Box(-1, 1, (2,), np.float32)})


def test_output_space_and_env_to_module_rewrites_the_newest_observation():
    piece = FlattenObservations(gym.spaces.Discrete(4), None)
    assert piece.observation_space == gym.spaces.Box(0.0, 1.0, (4,), np.float32)
    ep = reset_episode(2, obs_space=gym.spaces.Discrete(4))
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(ep.get_observations(-1), [0, 0, 1, 0])
    assert ep.get_observations(-1).dtype == np.float32
    ep.add_env_step(3, 0, 0.0)
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(np.stack(ep.get_observations()), [[0, 0, 1, 0], [0, 0, 0, 1]])


def test_dict_observations_flatten_in_key_order():
    piece = FlattenObservations(DICT, None)
    assert piece.observation_space.shape == (5,)
    ep = reset_episode({"cell": 1, "pos": np.float32([0.5, -0.5])}, obs_space=DICT)
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(ep.get_observations(-1), [0, 1, 0, 0.5, -0.5])


def test_learner_mode_on_numpy_episodes_flattens_every_observation_including_lookback():
    disc = gym.spaces.Discrete(4)
    ep = make_episode([0, 1, 2, 3, 1], [0, 0, 0, 0], [0.0] * 4, lookback=1, obs_space=disc)
    piece = FlattenObservations(disc, None, as_learner_connector=True)
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(ep.get_observations(), np.eye(4, dtype=np.float32)[[1, 2, 3, 1]])
    np.testing.assert_array_equal(ep.get_observations(-1, neg_index_as_lookback=True), [1, 0, 0, 0])
    assert ep.observation_space == piece.observation_space and len(ep) == 3


def test_learner_pipeline_with_flatten_puts_one_hot_rows_into_the_batch():
    disc = gym.spaces.Discrete(3)
    cfg = PPOConfig().learners(
        learner_connector=lambda obs_space, act_space: FlattenObservations(as_learner_connector=True))
    pipe = cfg.build_learner_connector(disc, gym.spaces.Discrete(2))
    assert pipe.observation_space.shape == (3,)
    ep = make_episode([0, 2, 1], [0, 1], [1.0, 1.0], obs_space=disc)
    out = pipe(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(out[Columns.OBS].numpy(), [[1, 0, 0], [0, 0, 1]])


def test_keys_to_remove_drops_dict_keys_before_flattening():
    piece = FlattenObservations(DICT, None, keys_to_remove=["cell"])
    assert piece.observation_space.shape == (2,)
    ep = reset_episode({"cell": 1, "pos": np.float32([0.5, -0.5])}, obs_space=DICT)
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(ep.get_observations(-1), [0.5, -0.5])


def test_env_to_module_sets_the_episode_space_so_fills_have_the_flat_shape():
    disc = gym.spaces.Discrete(3)
    piece = FlattenObservations(disc, None)
    ep = reset_episode(1, obs_space=disc)
    piece(rl_module=None, batch={}, episodes=[ep])
    assert ep.observation_space == piece.observation_space
    frames = ep.get_observations(indices=[-3, -2, -1], fill=0.0)  # as the seeds' StackFourObservations does
    np.testing.assert_array_equal(np.concatenate(frames), [0, 0, 0, 0, 0, 0, 0, 1, 0])
    successor = ep.cut(len_lookback_buffer=1)
    assert successor.observation_space == piece.observation_space
