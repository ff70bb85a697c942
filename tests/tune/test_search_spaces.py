"""Ray Tune search spaces in configs: builder calls and dicts take them unchecked, to_dict() keeps
them for Tune, and building an algorithm from an unresolved config says what to do."""
import pytest

from relayrl import PPOConfig

tune = pytest.importorskip("ray.tune")


def _spaces():
    return {
        "lr": tune.loguniform(1e-5, 1e-3),
        "gamma": tune.uniform(0.9, 0.999),
        "num_epochs": tune.randint(1, 10),
        "train_batch_size": tune.choice([256, 512]),
        "minibatch_size": tune.grid_search([32, 64]),
        "entropy_coeff": tune.sample_from(lambda spec: 0.01),
        "gym_env_vectorize_mode": tune.choice(["SYNC", "ASYNC"]),
    }


def test_builder_calls_and_dicts_accept_search_spaces():
    spaces = _spaces()
    config = (PPOConfig().environment("CartPole-v1", env_config={"size": tune.choice([5, 10])})
              .training(**{k: v for k, v in spaces.items() if k != "gym_env_vectorize_mode"})
              .env_runners(gym_env_vectorize_mode=spaces["gym_env_vectorize_mode"])
              .rl_module(model_config={"fcnet_hiddens": tune.choice([[32], [64, 64]])}))
    as_dict = config.to_dict()
    for key, space in spaces.items():
        assert type(as_dict[key]) is type(space)
    assert as_dict["minibatch_size"] == {"grid_search": [32, 64]}
    assert isinstance(as_dict["env_config"]["size"], tune.search.sample.Categorical)
    # A dict round trip keeps them too (Tune hands trials dicts; users write dicts).
    again = PPOConfig.from_dict(as_dict).to_dict()
    assert type(again["lr"]) is type(spaces["lr"]) and again["minibatch_size"] == {"grid_search": [32, 64]}


def test_building_an_unresolved_config_explains_the_fix():
    config = PPOConfig().environment("CartPole-v1").training(lr=tune.choice([1e-3, 1e-4]))
    with pytest.raises(ValueError, match=r"lr is still a Ray Tune search space.*Tuner\(PPO, param_space=config\)"):
        config.build_algo()


def test_resolved_values_are_checked_as_usual():
    with pytest.raises(ValueError, match="lr must be"):
        PPOConfig().training(lr="fast")
