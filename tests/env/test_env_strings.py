"""Env strings resolve as gymnasium resolves them: its "module:EnvId" form imports the module, then makes EnvId
("ale_py:ALE/Pong-v5", the string RLlib's Atari examples use, trains through relayrl's Atari preprocessing)."""
import pytest

from relayrl import PPOConfig
from relayrl.env.env_context import EnvContext
from relayrl.env.registry import gym_env_id, make_env_creator, resolve_env_spec, split_module_env_id


def test_split_module_env_id():
    assert split_module_env_id("ale_py:ALE/Pong-v5") == ("ale_py", "ALE/Pong-v5")
    assert split_module_env_id("gymnasium.envs.classic_control:CartPole-v1") == (
        "gymnasium.envs.classic_control", "CartPole-v1")
    for not_one in ("CartPole-v1", "my_pkg.envs:MyEnv", "my_pkg.envs.MyEnv", ":Pong-v5", "ale_py:", 3, None):
        assert split_module_env_id(not_one) is None  # (a Python path to an object stays one)
    assert gym_env_id("ale_py:ALE/Pong-v5") == "ALE/Pong-v5" and gym_env_id("CartPole-v1") == "CartPole-v1"


def test_a_module_env_id_makes_the_env_and_stays_a_string_in_the_config():
    env = make_env_creator("gymnasium.envs.classic_control:CartPole-v1")(EnvContext({}, 0))
    assert env.spec.id == "CartPole-v1"
    assert resolve_env_spec("gymnasium.envs.classic_control:CartPole-v1") == "gymnasium.envs.classic_control:CartPole-v1"


@pytest.mark.parametrize("spec, words", [
    ("ale_py:ALE/Pongg-v5", "importing 'ale_py' registered no gymnasium id 'ALE/Pongg-v5'. Did you mean `ALE/Pong-v5`"),
    ("no_such_module_46:Foo-v0", "cannot import module 'no_such_module_46'"),
])
def test_bad_module_env_ids_say_what_is_wrong(spec, words):
    pytest.importorskip("ale_py")
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make_env_creator(spec)


def test_ale_py_pong_trains_through_the_atari_preprocessing():
    pytest.importorskip("ale_py")
    config = (PPOConfig().environment("ale_py:ALE/Pong-v5")
              .env_runners(rollout_fragment_length=16, num_envs_per_env_runner=1)
              .training(train_batch_size_per_learner=16, minibatch_size=16, num_epochs=1)
              .rl_module(model_config={"conv_filters": [[4, [8, 8], 8]], "fcnet_hiddens": [8],
                                       "head_fcnet_hiddens": [8]})
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] == 16
        # the same preprocessing as "ALE/Pong-v5": 84x84 frames, 4 stacked on the channels
        assert algo.env_runner.env.single_observation_space.shape == (84, 84, 4)
        assert algo.config.env == "ale_py:ALE/Pong-v5"
    finally:
        algo.stop()
