"""Bad model_config / exploration_config values raise at config validation (before anything is built),
naming the option, the bad value and a fix; not a torch TypeError deep in module construction."""
import pytest

from relayrl import DefaultModelConfig, DQNConfig, PPOConfig


def ppo(model_config):
    return PPOConfig().environment("CartPole-v1").rl_module(model_config=model_config)


@pytest.mark.parametrize("key,value,shown,fix", [
    ("fcnet_hiddens", "64", "'64'", "[64, 64]"),           # a string: the probe of issue 19
    ("fcnet_hiddens", 64, "64", "[64, 64]"),               # an int instead of a list
    ("fcnet_hiddens", [64, 0], "[64, 0]", "[64, 64]"),     # a layer of size 0
    ("head_fcnet_hiddens", "32", "'32'", "[]"),
    ("fcnet_activation", "relux", "'relux'", "'relu'"),
    ("vf_share_layers", "no", "'no'", "True"),
    ("fcnet_kernel_initializer", "not_an_init", "'not_an_init'", "'orthogonal_'"),
])
def test_bad_model_config_value_is_named_at_validation(key, value, shown, fix):
    config = ppo({key: value})
    with pytest.raises(ValueError) as info:
        config.validate()
    message = str(info.value)
    assert f"model_config['{key}']" in message  # the option
    assert f"got {shown}" in message  # the bad value
    assert f"{key}={fix}" in message or f"'{key}': {fix}" in message  # the fix
    with pytest.raises(ValueError, match=rf"model_config\['{key}'\]"):  # build_algo validates first
        config.build_algo()


def test_a_string_for_layer_sizes_says_how_to_write_one_layer():
    with pytest.raises(ValueError, match=r"a string, not a list: write \[64\] for one layer of 64"):
        ppo({"fcnet_hiddens": "64"}).validate()


def test_default_model_config_checks_its_fields_when_made():
    with pytest.raises(ValueError, match=r"model_config\['fcnet_hiddens'\] must be a list of positive ints.*got '64'"):
        DefaultModelConfig(fcnet_hiddens="64")


def test_good_model_configs_pass():
    ppo({"fcnet_hiddens": (32, 32), "fcnet_activation": "ReLU", "head_fcnet_hiddens": []}).validate()
    ppo(DefaultModelConfig(fcnet_hiddens=[8], fcnet_kernel_initializer="orthogonal_")).validate()
    ppo({"my_custom_module_key": "anything"}).validate()  # keys a custom RLModule reads are its business


@pytest.mark.parametrize("make_config", [
    lambda: DQNConfig().environment("CartPole-v1").env_runners(exploration_config={"initial_epsilon": "x"}),
    lambda: PPOConfig().environment("CartPole-v1").env_runners(
        exploration_config={"type": "EpsilonGreedy", "initial_epsilon": "x"}),
], ids=["dqn-default-type", "explicit-type"])
def test_bad_exploration_value_is_named_at_validation(make_config):
    config = make_config()
    with pytest.raises(ValueError) as info:
        config.validate()
    message = str(info.value)
    assert "exploration_config['initial_epsilon']" in message  # the option
    assert "must be a number, got 'x' (str)" in message  # the problem and the bad value
    assert "'type': 'EpsilonGreedy', 'initial_epsilon': 1.0" in message  # the fix
    with pytest.raises(ValueError, match=r"exploration_config\['initial_epsilon'\]"):
        config.build_algo()


def test_exploration_value_the_class_rejects_names_the_option():
    config = DQNConfig().environment("CartPole-v1").env_runners(
        exploration_config={"type": "EpsilonGreedy", "epsilon_timesteps": -5})
    with pytest.raises(ValueError, match=r"exploration_config \{'type': 'EpsilonGreedy', 'epsilon_timesteps': -5\}"
                                         r".*epsilon_timesteps >= 1, got 0 and -5"):
        config.build_algo()


def test_unknown_exploration_key_keeps_its_did_you_mean():
    config = DQNConfig().environment("CartPole-v1").env_runners(exploration_config={"initial_epsilonn": 0.5})
    with pytest.raises(ValueError, match="has no argument 'initial_epsilonn'.*Did you mean `initial_epsilon`"):
        config.validate()
