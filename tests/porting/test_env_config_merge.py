"""env_config given to `environment()` or `update_from_dict` merges into the current one at every depth, as RLlib
2.60's `deep_update` does (a ported script that calls `.environment(env_config=...)` twice keeps the first call's
keys); setting the attribute replaces it, as in RLlib."""
from relayrl import PPOConfig


def test_the_builder_merges_env_config_at_every_depth_without_touching_the_users_dict():
    mine = {"level": {"size": 3}}
    config = PPOConfig().environment(env_config={"level": {"size": 1, "walls": 2}, "seed_offset": 7})
    config.environment(env_config=mine)
    assert config.env_config == {"level": {"size": 3, "walls": 2}, "seed_offset": 7}
    assert mine == {"level": {"size": 3}}
    config.environment(env_config={"level": 5})  # a non-dict value replaces the dict under it
    assert config.env_config == {"level": 5, "seed_offset": 7}


def test_update_from_dict_merges_and_the_attribute_replaces():
    config = PPOConfig().environment(env_config={"a": {"x": 1, "y": 2}})
    config.update_from_dict({"env_config": {"a": {"x": 3}, "b": 1}})
    assert config.env_config == {"a": {"x": 3, "y": 2}, "b": 1}
    config.env_config = {"c": 1}
    assert config.env_config == {"c": 1}
    assert PPOConfig.from_dict(config.to_dict()).env_config == {"c": 1}


def test_a_bad_env_config_leaves_the_config_as_it_was():
    config = PPOConfig().environment(env_config={"a": 1})
    try:
        config.environment(env_config=["not", "a", "dict"])
    except (TypeError, ValueError) as error:
        assert "env_config" in str(error)
    else:
        raise AssertionError("a list for env_config was accepted")
    assert config.env_config == {"a": 1}
