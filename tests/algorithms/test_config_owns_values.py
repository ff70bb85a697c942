"""A config keeps its own copy of plain-data lists and dicts: changing it never changes the caller's
dict (or a module constant such as RLLIB_DQN_DEFAULTS), and objects inside configs keep their identity."""
from relayrl.algorithms.appo.appo_config import RLLIB_APPO_DEFAULTS, APPOConfig
from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_DEFAULTS, DQNConfig
from relayrl.algorithms.ppo.ppo_config import PPOConfig


def test_restoring_rllib_defaults_does_not_alias_the_constants():
    dqn = DQNConfig().update_from_dict(RLLIB_DQN_DEFAULTS)
    dqn.epsilon.append([10_000_000, 0.0])
    assert [10_000_000, 0.0] not in RLLIB_DQN_DEFAULTS["epsilon"]
    appo = APPOConfig().update_from_dict(RLLIB_APPO_DEFAULTS)
    appo.model_config["fcnet_hiddens"].append(7)
    assert RLLIB_APPO_DEFAULTS["model_config"]["fcnet_hiddens"] == [256, 256]


def test_builder_args_are_copied_but_objects_inside_keep_their_identity():
    hiddens = [32, 32]
    config = PPOConfig().rl_module(model_config={"fcnet_hiddens": hiddens})
    hiddens.append(64)
    assert config.model_config["fcnet_hiddens"] == [32, 32]

    shared = object()
    env_config = {"resource": shared}
    config = PPOConfig().environment("CartPole-v1", env_config=env_config)
    assert config.env_config["resource"] is shared
