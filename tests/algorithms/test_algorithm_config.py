"""AlgorithmConfig / PPOConfig: defaults, builders, checks, dicts, aliases, copy/freeze, validation."""
import dataclasses
import inspect
import math
import pickle
import warnings

import gymnasium as gym
import pytest

from relayrl.algorithms import options as options_module
from relayrl.algorithms.algorithm_config import AlgorithmConfig, NotProvided
from relayrl.algorithms.options import UnknownOptionError
from relayrl.algorithms.ppo.ppo_config import PPOConfig
from relayrl.callbacks import RLlibCallback

BASE_DEFAULTS = {
    "env": None, "env_config": {}, "observation_space": None, "action_space": None,
    "clip_rewards": None, "observation_filter": "NoFilter", "normalize_actions": True, "clip_actions": False,
    "disable_env_checking": False,
    "record_video_every_n_episodes": None, "video_dir": None,  # relayrl's (RLlib: render_env + callbacks)
    "num_env_runners": 0, "num_envs_per_env_runner": 1, "create_env_on_local_worker": False,
    "rollout_fragment_length": "auto", "batch_mode": "truncate_episodes", "env_to_module_connector": None,
    "module_to_env_connector": None, "add_default_connectors_to_env_to_module_pipeline": True,
    "add_default_connectors_to_module_to_env_pipeline": True, "episode_lookback_horizon": 1,
    "merge_env_runner_states": "training_only", "broadcast_env_runner_states": True, "explore": True,
    "use_worker_filter_stats": True, "update_worker_filter_stats": True, "numpy_inference": True,
    "gym_env_vectorize_mode": "SYNC", "exploration_config": {},
    "num_cpus_per_env_runner": 1, "num_gpus_per_env_runner": 0, "custom_resources_per_env_runner": {},
    "max_requests_in_flight_per_env_runner": 1, "sample_timeout_s": 60.0, "env_runner_cls": None,
    "num_learners": 0, "num_cpus_per_learner": "auto", "num_gpus_per_learner": 0, "learner_class": None,
    "learner_config_dict": {}, "learner_connector": None, "add_default_connectors_to_learner_pipeline": True,
    "gamma": 0.99, "lr": 0.001, "train_batch_size_per_learner": None, "train_batch_size": 32,
    "minibatch_size": None, "num_epochs": 1, "shuffle_batch_per_epoch": False, "grad_clip": None,
    "grad_clip_by": "global_norm", "model_config": {}, "rl_module_spec": None,
    "metrics_num_episodes_for_smoothing": 100, "min_time_s_per_iteration": None,
    "min_sample_timesteps_per_iteration": 0, "min_train_timesteps_per_iteration": 0,
    "evaluation_interval": None, "evaluation_duration": 10, "evaluation_duration_unit": "episodes",
    "evaluation_num_env_runners": 0, "evaluation_parallel_to_training": False, "evaluation_config": None,
    "custom_evaluation_function": None, "evaluation_sample_timeout_s": 120.0,
    "seed": None, "log_level": "WARN", "logger_config": None, "on_nonfinite_gradient": "raise",
    "callbacks": RLlibCallback, "callbacks_on_algorithm_init": None, "callbacks_on_train_result": None,
    "callbacks_on_evaluate_start": None, "callbacks_on_evaluate_end": None,
    "callbacks_on_evaluate_offline_start": None, "callbacks_on_evaluate_offline_end": None,
    "callbacks_on_env_runners_recreated": None, "callbacks_on_checkpoint_loaded": None,
    "callbacks_on_environment_created": None, "callbacks_on_episode_created": None,
    "callbacks_on_episode_start": None, "callbacks_on_episode_step": None, "callbacks_on_episode_end": None,
    "callbacks_on_sample_end": None,
    "restart_failed_env_runners": True, "ignore_env_runner_failures": False, "max_num_env_runner_restarts": 1000,
    "delay_between_env_runner_restarts_s": 60.0, "env_runner_health_probe_timeout_s": 30.0,
    "env_runner_restore_timeout_s": 1800.0, "num_consecutive_env_runner_failures_tolerance": 100,
    "restart_failed_sub_environments": False,
    "export_native_model_files": False, "checkpoint_trainable_policies_only": False,
    # RLlib's, for porting (docs/porting.md)
    "framework": "torch", "torch_compile_learner": False, "torch_compile_learner_what_to_compile": "forward_train",
    "torch_compile_learner_dynamo_backend": "inductor", "torch_compile_learner_dynamo_mode": None,
    "torch_compile_worker": False, "torch_compile_worker_dynamo_backend": "onnxrt",
    "torch_compile_worker_dynamo_mode": None, "enable_rl_module_and_learner": True,
    "enable_env_runner_and_connector_v2": True, "_validate_config": True, "_torch_lr_scheduler_classes": None,
    "_torch_grad_scaler_class": None, "_use_msgpack_checkpoints": False, "num_gpus": 0, "horizon": None, "soft_horizon": False,
    "no_done_at_end": False,
    "legacy_result_keys": False, "evaluation_force_reset_envs_before_iteration": True,
    # multi_agent(): RLlib's defaults (policies None: single-agent)
    "policies": None, "policy_mapping_fn": None, "policies_to_train": None, "count_steps_by": "env_steps",
    # offline_data(): RLlib's defaults, except where docs/offline.md says why relayrl's differ
    "input": "sampler", "input_reader": "auto", "input_read_method": "read_parquet", "input_read_method_kwargs": {},
    "input_read_schema": {}, "input_read_episodes": False, "input_read_sample_batches": False,
    "input_read_batch_size": None, "input_filesystem": None, "input_filesystem_kwargs": {},
    "input_compress_columns": ["obs", "new_obs"], "materialize_data": False, "materialize_mapped_data": True,
    "map_batches_kwargs": {}, "iter_batches_kwargs": {}, "ignore_final_observation": False, "prelearner_class": None,
    "prelearner_buffer_class": None, "prelearner_buffer_kwargs": {}, "prelearner_module_synch_period": 10,
    "prelearner_use_recorded_module_states": False, "dataset_num_iters_per_learner": None,
    "shuffle_buffer_size": "auto",  # RLlib: 0
    "input_restore_position": True,  # relayrl's (RLlib stores no reader position)
    "output": None, "output_write_episodes": True,
    "output_compress_columns": [],  # RLlib: ["obs", "new_obs"]
    "output_max_rows_per_file": 10_000,  # RLlib: None (a file per sample() call)
    "output_max_file_size": 64 * 1024 * 1024,
    "output_write_remaining_data": True,  # RLlib: False
    "output_write_method": "write_parquet", "output_write_method_kwargs": {}, "output_filesystem": None,
    "output_filesystem_kwargs": {}, "offline_sampling": False, "offline_data_class": None,
    # evaluation(): offline evaluation, RLlib's defaults
    "offline_evaluation_interval": None, "num_offline_eval_runners": 0, "offline_evaluation_type": "eval_loss",
    "offline_eval_runner_class": None, "offline_loss_for_module_fn": None, "offline_eval_batch_size_per_runner": 256,
    "dataset_num_iters_per_offline_eval_runner": 1, "offline_evaluation_duration": 1,
    "offline_evaluation_parallel_to_training": False, "offline_eval_rl_module_inference_only": False,
    "offline_evaluation_timeout_s": 120.0, "num_cpus_per_offline_eval_runner": 1, "num_gpus_per_offline_eval_runner": 0,
    "custom_resources_per_offline_eval_runner": {}, "max_requests_in_flight_per_offline_eval_runner": 1,
    "broadcast_offline_eval_runner_states": False, "validate_offline_eval_runners_after_construction": True,
    "restart_failed_offline_eval_runners": True, "ignore_offline_eval_runner_failures": False,
    "max_num_offline_eval_runner_restarts": 1000, "offline_eval_runner_health_probe_timeout_s": 30.0,
    "offline_eval_runner_restore_timeout_s": 1800.0,
}
PPO_OPTIONS = {
    "lambda": 1.0, "clip_param": 0.3, "vf_clip_param": 10.0, "vf_loss_coeff": 1.0,
    "entropy_coeff": 0.0, "use_kl_loss": True, "kl_coeff": 0.2, "kl_target": 0.01,
    "use_critic": True, "use_gae": True,
}
# relayrl's documented PPO defaults (the PPO paper's / SB3's); RLLIB_PPO_DEFAULTS restores RLlib's.
PPO_DEFAULTS = {**BASE_DEFAULTS, **PPO_OPTIONS, "num_envs_per_env_runner": 8, "lr": 3e-4, "train_batch_size": 2048,
                "minibatch_size": 64, "num_epochs": 10, "shuffle_batch_per_epoch": True, "grad_clip": 0.5,
                "lambda": 0.95, "clip_param": 0.2, "vf_clip_param": float("inf"), "vf_loss_coeff": 0.5,
                "use_kl_loss": False}
GROUPS = ["environment", "env_runners", "learners", "training", "rl_module", "reporting",
          "evaluation", "debugging", "callbacks", "fault_tolerance", "checkpointing", "framework", "resources",
          "multi_agent", "offline_data"]


@pytest.fixture(autouse=True)
def fresh_alias_warnings():
    options_module._warned_aliases.clear()  # warnings are once per process; tests need each one
    yield
    options_module._warned_aliases.clear()


@dataclasses.dataclass
class FakeModelConfig:  # stands in for DefaultModelConfig (any dataclass is accepted)
    fcnet_hiddens: list = dataclasses.field(default_factory=lambda: [32])
    vf_share_layers: bool = True


def ppo_cartpole():
    return PPOConfig().environment("CartPole-v1")


# -- defaults, builders, signatures ---------------------------------------------------------------

def test_defaults_match_rllib():
    assert AlgorithmConfig().to_dict() == BASE_DEFAULTS
    assert PPOConfig().to_dict() == PPO_DEFAULTS
    config = PPOConfig()
    assert config.lambda_ == 0.95 and config.lr == 3e-4 and config.num_env_runners == 0
    assert config.model_config == {"fcnet_hiddens": [64, 64], "vf_share_layers": False}
    assert config.copy().rl_module(model_config={"fcnet_activation": "relu"}).model_config == {
        "fcnet_hiddens": [64, 64], "vf_share_layers": False, "fcnet_activation": "relu"}


def test_rllib_ppo_defaults_restore_rllibs_values():
    from relayrl.algorithms.ppo.ppo_config import RLLIB_PPO_DEFAULTS

    config = PPOConfig().update_from_dict(RLLIB_PPO_DEFAULTS)
    assert (config.lr, config.num_epochs, config.train_batch_size, config.minibatch_size) == (5e-5, 30, 4000, 128)
    assert (config.lambda_, config.clip_param, config.vf_clip_param, config.use_kl_loss) == (1.0, 0.3, 10.0, True)
    assert config.model_config["fcnet_hiddens"] == [256, 256] and config.model_config["vf_share_layers"]


def test_each_instance_gets_its_own_mutable_defaults():
    a, b = AlgorithmConfig(), AlgorithmConfig()
    a.env_config["x"] = 1
    assert b.env_config == {}


def test_builders_chain_and_set_only_given_args():
    config = PPOConfig()
    assert config.environment("CartPole-v1", env_config={"a": 1}) is config
    assert config.env_runners(num_envs_per_env_runner=4) is config
    assert config.learners(num_learners=0) is config
    assert config.training(lr=1e-3, lambda_=0.9) is config
    assert config.rl_module(model_config={"fcnet_hiddens": [8]}) is config
    assert config.reporting(min_time_s_per_iteration=1.5) is config
    assert config.debugging(seed=3) is config
    assert config.training(gamma=0.9, lr=NotProvided) is config
    assert (config.env, config.env_config, config.num_envs_per_env_runner) == ("CartPole-v1", {"a": 1}, 4)
    assert (config.lr, config.lambda_, config.gamma, config.seed) == (1e-3, 0.9, 0.9, 3)
    assert config.num_epochs == 10  # untouched


@pytest.mark.parametrize("group", GROUPS)
def test_builder_signature_lists_its_options(group):
    for cls in (AlgorithmConfig, PPOConfig):
        params = inspect.signature(getattr(cls, group)).parameters
        expected = [o.name for o in cls.options() if group in o.groups]
        assert sorted(params) == sorted(["self", *expected])
        for name in expected:
            assert params[name].default is NotProvided
            assert name in getattr(cls, group).__doc__
        kinds = {p.kind for n, p in params.items() if n not in ("self", "env", "callbacks_class", "framework_str")}
        assert kinds <= {inspect.Parameter.KEYWORD_ONLY}


def test_ppo_training_signature_has_base_and_ppo_options():
    params = inspect.signature(PPOConfig.training).parameters
    for name in ["gamma", "lr", "minibatch_size", "lambda_", "clip_param", "entropy_coeff",
                 "learner_connector", "add_default_connectors_to_learner_pipeline"]:
        assert name in params
    assert "lambda_" not in inspect.signature(AlgorithmConfig.training).parameters
    doc = PPOConfig.training.__doc__
    assert "GAE lambda" in doc and "Default: 0.0003" in doc and "Default: 0.001" not in doc


def test_environment_takes_env_positionally_only_env():
    config = AlgorithmConfig().environment("CartPole-v1")
    assert config.env == "CartPole-v1"
    with pytest.raises(TypeError, match="positional"):
        config.environment("CartPole-v1", {"a": 1})
    with pytest.raises(TypeError, match="multiple values"):
        config.environment("CartPole-v1", env="Pendulum-v1")
    with pytest.raises(TypeError):
        config.training(0.9)


def test_learner_connector_options_reachable_from_learners_and_training():
    factory = lambda obs_space, act_space: []  # noqa: E731
    config = AlgorithmConfig().training(learner_connector=factory,
                                        add_default_connectors_to_learner_pipeline=False)
    assert config.learner_connector is factory
    assert config.add_default_connectors_to_learner_pipeline is False
    config.learners(add_default_connectors_to_learner_pipeline=True)
    assert config.add_default_connectors_to_learner_pipeline is True


def test_ppo_options_only_on_ppo_config():
    with pytest.raises(TypeError, match="clip_param"):
        AlgorithmConfig().training(clip_param=0.2)
    assert not hasattr(AlgorithmConfig(), "clip_param")
    assert "lambda_" not in {o.name for o in AlgorithmConfig.options()}
    assert PPOConfig().training(clip_param=0.2).clip_param == 0.2


# -- unknown keys -------------------------------------------------------------------------------

def test_unknown_builder_keyword_suggests_the_option():
    with pytest.raises(TypeError) as info:
        PPOConfig().training(lamda=0.9)
    message = str(info.value)
    assert "training()" in message and "'lamda'" in message and "Did you mean `lambda_`?" in message


@pytest.mark.parametrize("group,typo,suggestion", [
    ("environment", "env_confg", "env_config"),
    ("env_runners", "num_env_runner", "num_env_runners"),
    ("learners", "num_learner", "num_learners"),
    ("training", "train_batch_sise", "train_batch_size"),
    ("rl_module", "model_cfg", "model_config"),
    ("reporting", "min_time_s_per_iter", "min_time_s_per_iteration"),
    ("debugging", "sed", "seed"),
])
def test_unknown_keyword_in_every_builder(group, typo, suggestion):
    with pytest.raises(TypeError) as info:
        getattr(PPOConfig(), group)(**{typo: 1})
    assert f"PPOConfig.{group}() got an unexpected keyword argument '{typo}'" in str(info.value)
    assert f"Did you mean `{suggestion}`?" in str(info.value)


def test_option_of_another_builder_names_that_builder():
    with pytest.raises(TypeError, match=r"`num_env_runners` is set in `env_runners\(\)`"):
        PPOConfig().training(num_env_runners=2)


def test_bad_keyword_leaves_config_unchanged():
    config = PPOConfig()
    with pytest.raises(TypeError):
        config.training(lr=0.1, lamda=0.9)
    assert config.lr == 3e-4


@pytest.mark.parametrize("call", [
    lambda: PPOConfig.from_dict({"lamda": 0.9}),
    lambda: PPOConfig().update_from_dict({"lamda": 0.9}),
    lambda: PPOConfig.overrides(lamda=0.9),
])
def test_unknown_dict_key_suggests_the_key(call):
    with pytest.raises(UnknownOptionError) as info:
        call()
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert str(info.value) == "PPOConfig has no option `lamda`. Did you mean `lambda`?"


def test_unknown_attribute_write_suggests_the_option():
    config = PPOConfig()
    with pytest.raises(AttributeError, match="Did you mean `num_epochs`"):
        config.num_epoch = 3
    with pytest.raises(AttributeError, match="Did you mean `gamma`"):
        config.gama  # noqa: B018
    config._private_state = 1  # private attributes stay free for the runtime code


# -- value checks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("group,kwargs,expected", [
    ("training", {"train_batch_size_per_learner": -5},
     "train_batch_size_per_learner must be a positive int"),
    ("training", {"train_batch_size": 0}, "train_batch_size must be a positive int"),
    ("training", {"train_batch_size": 100.0}, "train_batch_size must be a positive int"),
    ("training", {"minibatch_size": -1}, "minibatch_size must be a positive int"),
    ("training", {"gamma": 1.5}, "gamma must be a float in [0.0, 1.0]"),
    ("training", {"gamma": float("nan")}, "gamma must be"),
    ("training", {"lr": -0.1}, "lr must be a positive float or a schedule"),
    ("training", {"lr": [[100, 1e-3], [200, 1e-4]]}, "lr must be"),  # must start at 0
    ("training", {"lr": [[0, 1e-3], [0, 1e-4]]}, "lr must be"),  # must increase
    ("training", {"lr": [[0, 1e-3, 5]]}, "lr must be"),  # pairs only
    ("training", {"lr": []}, "lr must be"),
    ("training", {"grad_clip_by": "max"}, "grad_clip_by must be one of 'value', 'norm', 'global_norm'"),
    ("training", {"grad_clip": 0}, "grad_clip must be a positive float or None"),
    ("training", {"num_epochs": True}, "num_epochs must be a positive int"),
    ("training", {"shuffle_batch_per_epoch": "yes"}, "shuffle_batch_per_epoch must be a bool"),
    ("training", {"lambda_": 1.1}, "lambda_ must be a float in [0.0, 1.0]"),
    ("training", {"clip_param": 0}, "clip_param must be a positive float"),
    ("training", {"entropy_coeff": -0.01}, "entropy_coeff must be"),
    ("training", {"kl_target": 0}, "kl_target must be a positive float"),
    ("env_runners", {"batch_mode": "episodes"},
     "batch_mode must be one of 'truncate_episodes', 'complete_episodes', got 'episodes'"),
    ("env_runners", {"rollout_fragment_length": 0}, "rollout_fragment_length must be a positive int or 'auto', got 0"),
    ("env_runners", {"num_env_runners": -1}, "num_env_runners must be an int >= 0, got -1"),
    ("env_runners", {"num_envs_per_env_runner": 0}, "num_envs_per_env_runner must be a positive int"),
    ("env_runners", {"gym_env_vectorize_mode": "threads"}, "gym_env_vectorize_mode must be one of"),
    ("env_runners", {"env_to_module_connector": 3}, "env_to_module_connector must be a callable or None"),
    ("environment", {"env": 3}, "env must be a registered env id"),
    ("environment", {"env_config": [1]}, "env_config must be a dict"),
    ("environment", {"clip_rewards": -1.0}, "clip_rewards must be None, a bool, or a positive float"),
    ("environment", {"observation_space": (4,)}, "observation_space must be a gymnasium space"),
    ("rl_module", {"model_config": FakeModelConfig}, "model_config must be a dict or a dataclass"),
    ("reporting", {"min_time_s_per_iteration": -1}, "min_time_s_per_iteration must be a float >= 0"),
    ("debugging", {"log_level": "LOUD"}, "log_level must be one of"),
    ("debugging", {"seed": 1.5}, "seed must be an int >= 0 or None"),
])
def test_invalid_values_name_the_option(group, kwargs, expected):
    config = PPOConfig()
    before = config.to_dict()
    with pytest.raises(ValueError) as info:
        getattr(config, group)(**kwargs)
    assert expected in str(info.value)
    assert config.to_dict() == before


def test_valid_special_values_are_accepted_and_normalized():
    config = PPOConfig().training(lr=[[0, 1e-3], [10_000, 1e-4]], entropy_coeff=[[0, 0.01], [5, 0.0]],
                                  vf_clip_param=math.inf, grad_clip=40)
    assert config.vf_clip_param == math.inf
    config.env_runners(gym_env_vectorize_mode="async")
    assert config.gym_env_vectorize_mode == "ASYNC"
    config.env_runners(gym_env_vectorize_mode=gym.VectorizeMode.SYNC)
    assert config.gym_env_vectorize_mode == "SYNC"
    config.debugging(log_level="info")
    assert config.log_level == "INFO"
    config.environment(gym.Env, clip_rewards=True, observation_space=gym.spaces.Discrete(2))
    config.environment(lambda env_config: gym.make("CartPole-v1"), clip_rewards=5.0)
    config.env_runners(rollout_fragment_length=50)


def test_attribute_writes_are_checked_and_validate_rechecks_in_place_mutations():
    config = ppo_cartpole()
    config.lr = 1e-3
    assert config.lr == 1e-3
    with pytest.raises(ValueError, match="lr must be"):
        config.lr = -1
    config.lr = [[0, 1e-3], [100, 1e-4]]
    config.lr[1][0] = 0  # mutated in place: only validate() can see it
    with pytest.raises(ValueError, match="lr must be"):
        config.validate()


# -- validate() -------------------------------------------------------------------------------

def test_validate_accepts_defaults_with_env():
    ppo_cartpole().validate()
    AlgorithmConfig().environment("CartPole-v1").validate()


def test_validate_requires_an_env():
    with pytest.raises(ValueError, match=r"no environment set: call config.environment\('CartPole-v1'\)"):
        PPOConfig().validate()
    spaces = {"observation_space": gym.spaces.Box(-1, 1, (3,)), "action_space": gym.spaces.Discrete(2)}
    PPOConfig().environment(**spaces).validate()  # spaces alone suffice to build a module


def test_validate_minibatch_larger_than_batch():
    config = ppo_cartpole().training(train_batch_size_per_learner=64, minibatch_size=128)
    with pytest.raises(ValueError, match=r"minibatch_size \(128\) must be <= train_batch_size_per_learner \(64\)"):
        config.validate()
    config = ppo_cartpole().training(train_batch_size=4000, minibatch_size=1500).learners(num_learners=4)
    with pytest.raises(ValueError, match=r"minibatch_size \(1500\) must be <= train_batch_size_per_learner \(1000\)"):
        config.validate()


def test_validate_ppo_cross_field_rules():
    with pytest.raises(ValueError, match="truncate_episodes' requires use_gae=True"):
        ppo_cartpole().training(use_gae=False).validate()
    ppo_cartpole().training(use_gae=False).env_runners(batch_mode="complete_episodes").validate()
    with pytest.raises(ValueError, match="use_gae=True requires use_critic=True"):
        ppo_cartpole().training(use_critic=False).validate()


def test_validate_rollout_fragment_length_against_batch():
    config = ppo_cartpole().training(train_batch_size=4000)
    config.env_runners(rollout_fragment_length=200, num_envs_per_env_runner=4)
    config.validate()  # 800 per round divides 4000
    config.env_runners(rollout_fragment_length=3000)
    with pytest.raises(ValueError, match="rollout_fragment_length='auto'"):
        config.validate()  # 12000 per round for a 4000 batch


def test_validate_batch_per_learner_of_zero():
    config = ppo_cartpole().training(train_batch_size=3, minibatch_size=None).learners(num_learners=4)
    with pytest.raises(ValueError, match="train_batch_size"):
        config.validate()


# -- dicts ---------------------------------------------------------------------------------------

def test_to_dict_from_dict_round_trip():
    config = ppo_cartpole().training(lr=[[0, 1e-3], [100, 1e-4]], lambda_=0.9, num_epochs=6)
    config.rl_module(model_config=FakeModelConfig()).debugging(seed=7)
    config.env_runners(env_to_module_connector=lambda env, spaces, device: [])
    data = config.to_dict()
    assert set(data) == {o.dict_key for o in PPOConfig.options()}
    assert data["lambda"] == 0.9 and "lambda_" not in data
    restored = PPOConfig.from_dict(data)
    assert type(restored) is PPOConfig
    assert restored.to_dict() == data
    assert restored.env_to_module_connector is config.env_to_module_connector


def test_to_dict_is_a_copy():
    config = ppo_cartpole().environment(env_config={"size": 3})
    config.to_dict()["env_config"]["size"] = 99
    assert config.env_config == {"size": 3}


def test_update_from_dict_and_overrides():
    with pytest.warns(DeprecationWarning, match="num_sgd_iter"):
        config = ppo_cartpole().update_from_dict({"lambda": 0.5, "lr": 1e-4, "num_sgd_iter": 4})
    assert (config.lambda_, config.lr, config.num_epochs) == (0.5, 1e-4, 4)
    assert AlgorithmConfig.overrides(explore=False, num_env_runners=1) == {"explore": False,
                                                                           "num_env_runners": 1}
    assert PPOConfig.overrides(lambda_=0.5) == {"lambda": 0.5}
    with pytest.raises(ValueError, match="gamma must be"):
        AlgorithmConfig.overrides(gamma=2)
    with pytest.raises(UnknownOptionError):
        AlgorithmConfig.overrides(clip_param=0.1)  # a PPO option: not on the base config


def test_dict_style_access():
    config = ppo_cartpole().training(lambda_=0.7)
    assert config["lambda"] == 0.7 and config["lr"] == 3e-4
    assert config.get("nope", 3) == 3


# -- copy, freeze, pickle -------------------------------------------------------------------------

def test_copy_is_independent_and_shares_factories_and_spaces():
    factory = lambda env, spaces, device: []  # noqa: E731
    space = gym.spaces.Discrete(3)
    config = ppo_cartpole().environment(env_config={"a": [1]}, action_space=space)
    config.env_runners(env_to_module_connector=factory).rl_module(model_config={"h": [8]})
    clone = config.copy()
    assert type(clone) is PPOConfig and clone.to_dict() == config.to_dict()
    clone.env_config["a"].append(2)
    clone.training(lr=0.1)
    clone.rl_module(model_config={"h": [16]})
    assert config.env_config == {"a": [1]} and config.lr == 3e-4 and config.model_config == {
        "fcnet_hiddens": [64, 64], "vf_share_layers": False, "h": [8]}
    assert clone.env_to_module_connector is factory and clone.action_space is space


def test_freeze():
    config = ppo_cartpole()
    config.freeze()
    with pytest.raises(AttributeError, match="frozen PPOConfig"):
        config.training(lr=0.1)
    with pytest.raises(AttributeError, match="frozen"):
        config.lr = 0.1
    with pytest.raises(AttributeError, match="frozen"):
        config.update_from_dict({"lr": 0.1})
    assert config.lr == 3e-4
    with pytest.raises(AttributeError, match="frozen"):
        config.copy().training(lr=0.1)  # copies keep the frozen state by default
    thawed = config.copy(copy_frozen=False).training(lr=0.1)
    assert thawed.lr == 0.1
    with pytest.raises(AttributeError, match="frozen"):
        thawed.copy(copy_frozen=True).training(lr=0.2)
    config.validate()  # validating a frozen config is fine


def test_pickle_round_trip():
    config = ppo_cartpole().training(lambda_=0.8)
    restored = pickle.loads(pickle.dumps(config))
    assert restored.to_dict() == config.to_dict()
    assert pickle.loads(pickle.dumps(NotProvided)) is NotProvided


# -- aliases ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("group,alias,name,value", [
    ("env_runners", "num_rollout_workers", "num_env_runners", 3),
    ("env_runners", "num_workers", "num_env_runners", 2),
    ("env_runners", "num_envs_per_worker", "num_envs_per_env_runner", 4),
    ("training", "num_sgd_iter", "num_epochs", 5),
    ("training", "sgd_minibatch_size", "minibatch_size", 64),
    ("training", "shuffle_sequences", "shuffle_batch_per_epoch", False),
    # A full model config (every key of PPOConfig._MODEL_CONFIG_DEFAULTS), so that the merged
    # model_config property equals exactly what was set.
    ("rl_module", "model_config_dict", "model_config", {"fcnet_hiddens": [4], "vf_share_layers": True}),
])
def test_renamed_options_warn_once_and_set_the_new_option(group, alias, name, value):
    with pytest.warns(DeprecationWarning, match=f"`{alias}` is deprecated: use `{name}`") as record:
        config = getattr(PPOConfig(), group)(**{alias: value})
    assert getattr(config, name) == value
    assert len([w for w in record if issubclass(w.category, DeprecationWarning)]) == 1
    assert record[0].filename == __file__  # the warning points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second use stays silent
        getattr(PPOConfig(), group)(**{alias: value})
        PPOConfig.from_dict({alias: value})
        setattr(PPOConfig(), alias, value)


def test_lambda_key_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = PPOConfig().training(**{"lambda": 0.9})
        PPOConfig.from_dict({"lambda": 0.8})
    assert config.lambda_ == 0.9


def test_name_and_alias_together_is_an_error():
    with pytest.raises(TypeError, match="given twice"):
        PPOConfig().training(lambda_=0.9, **{"lambda": 0.8})


# -- Ray Tune search spaces -----------------------------------------------------------------------

class FakeTuneDomain:  # what tune.uniform(...) returns: a class from a ray.tune module
    pass


FakeTuneDomain.__module__ = "ray.tune.search.sample"


def test_tune_markers_accepted_then_rejected_by_validate():
    config = ppo_cartpole().training(lr={"grid_search": [1e-3, 1e-4]}, lambda_=FakeTuneDomain())
    assert config.to_dict()["lr"] == {"grid_search": [1e-3, 1e-4]}
    with pytest.raises(ValueError, match="lr is still a Ray Tune search space"):
        config.validate()
    config.training(lr=1e-4)
    with pytest.raises(ValueError, match="lambda_ is still a Ray Tune search space"):
        config.validate()
    config.training(lambda_=0.9)
    config.validate()
    with pytest.raises(ValueError, match="lr must be"):
        config.training(lr={"grid_search": [1], "other": 2})  # not a marker


# -- derived values -------------------------------------------------------------------------------

def test_train_batch_size_per_learner_fallback_and_total():
    config = PPOConfig()
    assert config.train_batch_size_per_learner == 2048 and config.total_train_batch_size == 2048
    config.learners(num_learners=4)
    assert config.train_batch_size_per_learner == 512 and config.total_train_batch_size == 2048
    config.training(train_batch_size_per_learner=1000)  # differs from the 512 fallback
    assert config.train_batch_size_per_learner == 1000 and config.total_train_batch_size == 4000
    assert config.to_dict()["train_batch_size_per_learner"] == 1000
    assert PPOConfig().to_dict()["train_batch_size_per_learner"] is None  # raw value in dicts


@pytest.mark.parametrize("total,runners,envs", [
    (4000, 3, 2), (4000, 2, 1), (2500, 4, 3), (512, 2, 20), (4000, 0, 1), (1001, 0, 8), (7, 5, 1),
])
def test_auto_rollout_fragment_length_covers_the_batch(total, runners, envs):
    config = PPOConfig().training(train_batch_size=total)
    config.env_runners(num_env_runners=runners, num_envs_per_env_runner=envs)
    indices = range(1, runners + 1) if runners else [0]
    lengths = [config.get_rollout_fragment_length(i) for i in indices]
    sampled = sum(lengths) * envs
    assert total <= sampled < total + envs
    assert max(lengths) - min(lengths) <= 1
    assert lengths == sorted(lengths, reverse=True)  # the extra step goes to the first runners


def test_auto_rollout_fragment_length_example():
    config = PPOConfig().training(train_batch_size=4000)
    config.env_runners(num_env_runners=3, num_envs_per_env_runner=2)
    assert [config.get_rollout_fragment_length(i) for i in (1, 2, 3)] == [667, 667, 666]
    config.env_runners(rollout_fragment_length=50)
    assert config.get_rollout_fragment_length(2) == 50


def test_model_config_property_returns_a_dict():
    config = PPOConfig()
    assert config.model_config == {"fcnet_hiddens": [64, 64], "vf_share_layers": False}
    model_config = FakeModelConfig()
    config.rl_module(model_config=model_config)
    assert config.model_config == {"fcnet_hiddens": [32], "vf_share_layers": True}
    assert config.to_dict()["model_config"] == model_config  # stored as given


def test_algo_class_and_multi_agent():
    assert AlgorithmConfig().algo_class is None
    sentinel = type("MyAlgo", (), {})
    assert PPOConfig(algo_class=sentinel).algo_class is sentinel
    from relayrl.algorithms.ppo.ppo import PPO

    assert PPOConfig().algo_class is PPO  # from the registry's table
    assert PPOConfig().is_multi_agent is False


def test_repr_shows_changed_options_only():
    assert repr(PPOConfig()) == "PPOConfig()"
    assert repr(ppo_cartpole().training(lambda_=0.9)) == "PPOConfig(env='CartPole-v1', lambda_=0.9)"
