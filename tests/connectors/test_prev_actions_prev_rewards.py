"""PrevActionsPrevRewards: the newest observation becomes {"_orig_obs", "prev_n_actions", "prev_n_rewards"}, in the
episode, so the Learner trains on what the module saw."""
import gymnasium as gym
import numpy as np
import pytest
from connector_test_utils import OBS_SPACE, o, reset_episode

from relayrl import PPOConfig
from relayrl.connectors import FlattenObservations, PrevActionsPrevRewards
from relayrl.examples.envs.classes.stateless_cartpole import StatelessCartPole

BOX_ACTIONS = gym.spaces.Box(np.float32([-2.0, 0.0]), np.float32([2.0, 1.0]), dtype=np.float32)


def test_output_space_holds_n_one_hot_actions_and_n_rewards():
    piece = PrevActionsPrevRewards(OBS_SPACE, gym.spaces.Discrete(3), n_prev_actions=2, n_prev_rewards=3)
    space = piece.observation_space
    assert list(space.spaces) == ["_orig_obs", "prev_n_actions", "prev_n_rewards"]
    assert space["_orig_obs"] == OBS_SPACE
    assert space["prev_n_actions"] == gym.spaces.Box(0.0, 1.0, (6,), np.float32)
    assert space["prev_n_rewards"] == gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)


def test_box_actions_keep_their_bounds_and_a_zero_count_leaves_the_key_out():
    space = PrevActionsPrevRewards(OBS_SPACE, BOX_ACTIONS, n_prev_actions=2, n_prev_rewards=0).observation_space
    assert list(space.spaces) == ["_orig_obs", "prev_n_actions"]
    np.testing.assert_array_equal(space["prev_n_actions"].low, [-2, 0, -2, 0])
    np.testing.assert_array_equal(space["prev_n_actions"].high, [2, 1, 2, 1])


def test_env_to_module_rewrites_the_newest_observation_with_zeros_before_the_start():
    piece = PrevActionsPrevRewards(OBS_SPACE, gym.spaces.Discrete(3), n_prev_actions=2, n_prev_rewards=2)
    ep = reset_episode(o(1, 2))
    piece(rl_module=None, batch={}, episodes=[ep])
    first = ep.get_observations(-1)
    np.testing.assert_array_equal(first["_orig_obs"], [1, 2])
    np.testing.assert_array_equal(first["prev_n_actions"], np.zeros(6))
    np.testing.assert_array_equal(first["prev_n_rewards"], [0, 0])
    assert ep.observation_space is piece.observation_space

    ep.add_env_step(o(3, 4), 2, 0.5)
    piece(rl_module=None, batch={}, episodes=[ep])
    second = ep.get_observations(-1)
    np.testing.assert_array_equal(second["_orig_obs"], [3, 4])
    np.testing.assert_array_equal(second["prev_n_actions"], [0, 0, 0, 0, 0, 1])  # zeros, then one-hot of 2
    np.testing.assert_array_equal(second["prev_n_rewards"], [0, 0.5])
    assert second["prev_n_actions"].dtype == np.float32 and second["prev_n_rewards"].dtype == np.float32

    ep.add_env_step(o(5, 6), 0, -1.0)
    piece(rl_module=None, batch={}, episodes=[ep])
    third = ep.get_observations(-1)
    np.testing.assert_array_equal(third["prev_n_actions"], [0, 0, 1, 1, 0, 0])
    np.testing.assert_array_equal(third["prev_n_rewards"], [0.5, -1.0])
    # earlier observations keep what the module saw then
    np.testing.assert_array_equal(ep.get_observations(0)["prev_n_actions"], np.zeros(6))


def test_box_actions_are_concatenated_as_floats():
    piece = PrevActionsPrevRewards(OBS_SPACE, BOX_ACTIONS, n_prev_actions=2, n_prev_rewards=1)
    ep = reset_episode(o(0, 0), act_space=BOX_ACTIONS)
    piece(rl_module=None, batch={}, episodes=[ep])
    ep.add_env_step(o(1, 1), np.float32([1.5, 0.25]), 1.0)
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(ep.get_observations(-1)["prev_n_actions"], [0, 0, 1.5, 0.25])


@pytest.mark.parametrize("kwargs, message", [
    ({"n_prev_actions": -1}, "n_prev_actions=-1"),
    ({"n_prev_rewards": 1.5}, "n_prev_rewards=1.5"),
])
def test_bad_counts_name_the_option(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PrevActionsPrevRewards(**kwargs)


def test_an_unsupported_action_space_names_the_way_out():
    with pytest.raises(ValueError, match="n_prev_actions=0"):
        PrevActionsPrevRewards(OBS_SPACE, gym.spaces.Text(5))


def test_ppo_with_an_lstm_trains_on_the_augmented_observations():
    """RLlib's example set-up: StatelessCartPole, the piece, then FlattenObservations, an LSTM module."""
    config = (PPOConfig().environment(StatelessCartPole)
              .env_runners(env_to_module_connector=lambda env, spaces, device: [
                  PrevActionsPrevRewards(n_prev_actions=2), FlattenObservations()])
              .training(train_batch_size=256, minibatch_size=64, num_epochs=1)
              .rl_module(model_config={"use_lstm": True, "lstm_cell_size": 16, "fcnet_hiddens": [16],
                                       "max_seq_len": 8})
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        module = algo.get_module()
        assert module.observation_space.shape == (2 + 2 * 2 + 1,)  # obs, two one-hot actions, one reward
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 256
        assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
    finally:
        algo.stop()
