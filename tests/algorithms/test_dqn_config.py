"""DQNConfig: RLlib's names and defaults, derived values, and clear errors for bad or unsupported settings."""
import pytest

from relayrl.algorithms.dqn.dqn_config import DEFAULT_REPLAY_BUFFER_CONFIG, RLLIB_DQN_DEFAULTS, DQNConfig
from relayrl.algorithms.registry import get_config_class


def cartpole(**training):
    return DQNConfig().environment("CartPole-v1").training(**training)


def test_relayrl_defaults():
    config = DQNConfig()
    assert config.lr == 5e-4 and config.grad_clip == 40.0
    assert config.train_batch_size_per_learner == 64 and config.num_envs_per_env_runner == 8
    assert config.n_step == 3 and config.training_intensity == 16
    assert config.double_q and config.dueling
    assert config.target_network_update_freq == 500 and config.tau == 1.0
    assert config.num_steps_sampled_before_learning_starts == 1000
    assert config.epsilon == [(0, 1.0), (10000, 0.02)]
    assert config.td_error_loss_fn == "huber"
    assert config.min_sample_timesteps_per_iteration == 1000
    assert config.evaluation_config == {"explore": False}
    assert config.replay_buffer_config == DEFAULT_REPLAY_BUFFER_CONFIG == {"type": "EpisodeReplayBuffer",
                                                                           "capacity": 50000}
    assert config.model_config["fcnet_hiddens"] == [256] and config.model_config["head_fcnet_hiddens"] == [256]
    assert DQNConfig().replay_buffer_config is not config.replay_buffer_config  # no shared mutable default


def test_rllib_dqn_defaults_restore_rllibs_values():
    config = DQNConfig().update_from_dict(RLLIB_DQN_DEFAULTS)
    assert config.train_batch_size_per_learner == 32 and config.num_envs_per_env_runner == 1
    assert config.n_step == 1 and config.training_intensity is None
    assert config.epsilon == [(0, 1.0), (10000, 0.05)]
    assert config.effective_replay_buffer_config == {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50000,
                                                     "alpha": 0.6, "beta": 0.4}


def test_naming_the_prioritized_type_fills_in_rllibs_alpha_and_beta():
    config = cartpole(replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1000})
    assert config.effective_replay_buffer_config == {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1000,
                                                     "alpha": 0.6, "beta": 0.4}


def test_registered_for_the_cli():
    assert get_config_class("dqn") is DQNConfig


def test_builder_sets_every_dqn_option():
    config = cartpole(n_step=(2, 5), double_q=False, dueling=False, target_network_update_freq=1, tau=0.005,
                      num_steps_sampled_before_learning_starts=64, training_intensity=8.0,
                      epsilon=[(0, 1.0), (500, 0.1)], td_error_loss_fn="mse",
                      replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 1000})
    assert config.n_step == (2, 5)
    assert config.to_dict()["tau"] == 0.005
    assert DQNConfig.from_dict(config.to_dict()).to_dict() == config.to_dict()
    config.validate()


def test_rollout_fragment_auto_is_n_step():
    assert cartpole().get_rollout_fragment_length() == 3  # relayrl's default n_step
    assert cartpole(n_step=1).get_rollout_fragment_length() == 1
    assert cartpole(n_step=3).get_rollout_fragment_length() == 3
    assert cartpole(n_step=[2, 5]).get_rollout_fragment_length() == 5
    config = cartpole(n_step=3).env_runners(rollout_fragment_length=7)
    assert config.get_rollout_fragment_length() == 7


def test_model_config_auto_includes_dueling_double_q_and_burn_in_len():
    config = cartpole(dueling=False).rl_module(model_config={"fcnet_hiddens": [32]})
    assert config.model_config == {"fcnet_hiddens": [32], "head_fcnet_hiddens": [256], "dueling": False,
                                   "double_q": True, "burn_in_len": 0}


def test_default_exploration_is_epsilon_greedy_on_the_epsilon_schedule():
    config = cartpole(epsilon=[(0, 1.0), (100, 0.02)])
    assert config.get_default_exploration_config() == {"type": "EpsilonGreedy",
                                                        "epsilon_schedule": [(0, 1.0), (100, 0.02)]}


def test_partial_replay_buffer_config_keeps_the_default_type_and_keys():
    config = cartpole(replay_buffer_config={"capacity": 1000})
    assert config.effective_replay_buffer_config == {**DEFAULT_REPLAY_BUFFER_CONFIG, "capacity": 1000}
    other = cartpole(replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 1000})
    assert other.effective_replay_buffer_config == {"type": "EpisodeReplayBuffer", "capacity": 1000}


@pytest.mark.parametrize("kwargs, match", [
    ({"n_step": 0}, "n_step must be an int >= 1"),
    ({"n_step": (5, 2)}, "n_step must be"),
    ({"n_step": (1, 2, 3)}, "n_step must be"),
    ({"tau": 0.0}, "tau must be a float in"),
    ({"tau": 1.5}, "tau must be"),
    ({"td_error_loss_fn": "l1"}, "td_error_loss_fn must be one of 'huber', 'mse'"),
    ({"training_intensity": 0}, "training_intensity must be"),
    ({"target_network_update_freq": -1}, "target_network_update_freq"),
    ({"epsilon": [(0, 1.0), (100, 2.0)]}, "epsilon must be"),
    ({"replay_buffer_config": [1]}, "replay_buffer_config must be a dict"),
])
def test_bad_values_raise_naming_the_option(kwargs, match):
    with pytest.raises(ValueError, match=match):
        cartpole(**kwargs)


@pytest.mark.parametrize("name, value", [("noisy", True), ("num_atoms", 51), ("v_min", -5.0),
                                         ("categorical_distribution_temperature", 0.5)])
def test_unsupported_rainbow_features_raise_on_validate(name, value):
    config = cartpole(**{name: value})
    with pytest.raises(ValueError, match=f"{name}=.*not implement.*Fix"):
        config.validate()


def test_capacity_must_hold_a_train_batch():
    with pytest.raises(ValueError, match="capacity"):
        cartpole(replay_buffer_config={"capacity": 16}).validate()
    with pytest.raises(ValueError, match="capacity"):
        cartpole(replay_buffer_config={"capacity": 0}).validate()


def test_unknown_option_gets_a_did_you_mean():
    with pytest.raises(TypeError, match="double_q"):
        DQNConfig().training(doubleq=True)
    with pytest.raises(ValueError, match="target_network_update_freq"):
        DQNConfig.from_dict({"target_network_update_frequency": 10})
