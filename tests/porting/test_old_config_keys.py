"""RLlib's framework()/resources() builders and the old config keys of seed 003's trial config: each maps to
today's option (one DeprecationWarning naming it), or is refused with a message saying what replaced it.
horizon / soft_horizon / no_done_at_end work; old evaluation keys and result fields are there."""
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

from relayrl import DQNConfig, IMPALAConfig, PPOConfig, RLlibCallback
from relayrl.algorithms import options as options_module
from relayrl.algorithms.options import UnknownOptionError
from relayrl.testing.envs import CountingEnv


@pytest.fixture(autouse=True)
def fresh_alias_warnings():
    options_module._warned_aliases.clear()  # one warning per key per process; each test wants its own
    yield
    options_module._warned_aliases.clear()


def tiny_ppo(**env_config):
    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": 5, **env_config})
            .env_runners(num_envs_per_env_runner=1)
            .training(train_batch_size=20, minibatch_size=10, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))


# -- framework / num_gpus --------------------------------------------------------------------------------------

def test_framework_torch_is_accepted_in_builders_dicts_and_the_cli():
    config = PPOConfig().framework("torch").framework(framework="torch")
    assert config.framework_str == "torch" and config.to_dict()["framework"] == "torch"
    assert PPOConfig.from_dict({"framework": "torch"}).framework_str == "torch"
    from relayrl.cli.flags import parse_train_args

    assert parse_train_args(["PPO", "--env", "CartPole-v1", "--framework", "torch"]).overrides["framework_str"] == "torch"


@pytest.mark.parametrize("framework", ["tf2", "tf", "jax"])
def test_other_frameworks_are_a_clear_error(framework):
    for make in (lambda: PPOConfig().framework(framework), lambda: PPOConfig.from_dict({"framework": framework})):
        with pytest.raises(ValueError, match="torch-only: 'tf2' and 'tf' are not supported"):
            make()


def test_cli_framework_tf2_fails_with_the_message():
    proc = subprocess.run([sys.executable, "-m", "relayrl", "train", "PPO", "--env", "CartPole-v1", "--framework",
                           "tf2"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "torch-only" in proc.stderr


def test_num_gpus_zero_is_accepted_more_is_refused_naming_the_replacement():
    assert PPOConfig().resources(num_gpus=0).num_gpus == 0
    assert PPOConfig.from_dict({"num_gpus": 0}).num_gpus == 0
    for make in (lambda: PPOConfig().resources(num_gpus=0.5), lambda: PPOConfig.from_dict({"num_gpus": 1})):
        with pytest.raises(ValueError, match=r"num_gpus_per_learner"):
            make()


# -- seed 003's trial config keys ---------------------------------------------------------------------------------

RENAMED = [("min_iter_time_s", 30, "min_time_s_per_iteration", 30),
           ("sample_batch_size", 40, "rollout_fragment_length", 40),
           ("num_workers", 0, "num_env_runners", 0),
           ("custom_eval_function", print, "custom_evaluation_function", print),
           ("timesteps_per_iteration", 100, "min_sample_timesteps_per_iteration", 100),
           ("evaluation_num_episodes", 3, "evaluation_duration", 3)]


@pytest.mark.parametrize("key, value, option, expected", RENAMED)
def test_renamed_keys_map_to_todays_option_with_one_warning(key, value, option, expected):
    with pytest.warns(DeprecationWarning, match=f"`{key}`.*`{option}`"):
        config = IMPALAConfig.from_dict({key: value})
    assert getattr(config, option) == expected
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        IMPALAConfig.from_dict({key: value})


def test_old_model_dict_becomes_model_config():
    with pytest.warns(DeprecationWarning, match="`model` is an old RLlib config key.*model_config"):
        config = PPOConfig.from_dict({"model": {"fcnet_hiddens": [16], "post_fcnet_hiddens": [8],
                                                "vf_share_layers": True}})
    assert config.model_config["fcnet_hiddens"] == [16] and config.model_config["head_fcnet_hiddens"] == [8]
    assert config.model_config["vf_share_layers"] is True


def test_training_takes_the_old_model_keyword_as_rllib_does():
    """RLlib's training() still has `model=` (the old model dict): it sets model_config, as the dict key does."""
    with pytest.warns(DeprecationWarning, match="`model` is an old RLlib config key.*model_config"):
        config = PPOConfig().training(model={"fcnet_activation": "relu", "post_fcnet_hiddens": [8]}, lr=1e-3)
    assert config.model_config["fcnet_activation"] == "relu" and config.model_config["head_fcnet_hiddens"] == [8]
    assert config.lr == 1e-3
    with pytest.raises(UnknownOptionError, match=r"custom_model.*RLModuleSpec\(module_class="):
        PPOConfig().training(model={"custom_model": "my_model"})
    with pytest.raises(TypeError, match="unexpected keyword argument 'monitor'"):  # old dict keys stay dict-only
        PPOConfig().training(monitor=False)


def _to_p1(agent_id, episode, worker=None, **kwargs):
    return "p1"


def test_old_multiagent_dict_sets_the_multi_agent_options_as_rllibs_update_from_dict_does():
    # (it was "PPOConfig has no option `multiagent`": RLlib's update_from_dict takes it, so old dicts and Tune
    # param_space dicts failed)
    with pytest.warns(DeprecationWarning, match="`multiagent` is an old RLlib config key.*config.multi_agent"):
        config = PPOConfig.from_dict({"multiagent": {"policies": {"p0", "p1"}, "policy_mapping_fn": _to_p1,
                                                     "policies_to_train": ["p1"], "count_steps_by": "agent_steps",
                                                     "policy_map_capacity": 100}})
    assert sorted(config.policies) == ["p0", "p1"] and config.policy_mapping_fn is _to_p1
    assert config.policies_to_train == ["p1"] and config.count_steps_by == "agent_steps" and config.is_multi_agent
    with pytest.raises(UnknownOptionError, match=r"observation_fn.*env-to-module connector"):
        PPOConfig.from_dict({"multiagent": {"policies": {"p0"}, "observation_fn": _to_p1}})
    with pytest.raises(UnknownOptionError, match=r"multiagent=\{'polices': ...\} is not a multi-agent setting"):
        PPOConfig.from_dict({"multiagent": {"polices": {"p0"}}})


def test_custom_model_is_refused_pointing_to_rl_module_spec():
    with pytest.raises(UnknownOptionError, match=r"custom_model.*RLModuleSpec\(module_class="):
        PPOConfig.from_dict({"model": {"custom_model": "my_model"}})


def test_monitor_and_record_env_record_videos():
    """Seed 003's `monitor` and RLlib 1.x's `record_env`: videos in the log dir (or record_env's folder), about
    every 1000th episode (gym's Monitor recorded every 1000th after the first ones)."""
    with pytest.warns(DeprecationWarning, match="`monitor`"):
        assert PPOConfig.from_dict({"monitor": False}).record_video_every_n_episodes is None
    assert PPOConfig.from_dict({"monitor": True}).record_video_every_n_episodes == 1000
    config = PPOConfig.from_dict({"record_env": "/tmp/videos"})
    assert (config.record_video_every_n_episodes, config.video_dir) == (1000, "/tmp/videos")
    assert PPOConfig.from_dict({"record_env": False}).record_video_every_n_episodes is None
    with pytest.raises(UnknownOptionError, match="record_env must be True, False or a folder"):
        PPOConfig.from_dict({"record_env": 3})


def test_always_attach_evaluation_results_true_is_what_train_does_false_is_refused():
    with pytest.warns(DeprecationWarning, match="carry the last evaluation's results"):
        config = PPOConfig().evaluation(always_attach_evaluation_results=True, evaluation_interval=2)
    assert config.evaluation_interval == 2
    for make in (lambda: PPOConfig().evaluation(always_attach_evaluation_results=False),
                 lambda: PPOConfig.from_dict({"always_attach_evaluation_results": False})):
        with pytest.raises(UnknownOptionError, match="False cannot be had.*on_evaluate_end"):
            make()


def test_old_impala_optimizer_keys():
    with pytest.raises(UnknownOptionError, match=r"opt_type='rmsprop'.*configure_optimizers_for_module"):
        IMPALAConfig.from_dict({"opt_type": "rmsprop"})
    with pytest.warns(DeprecationWarning, match="`opt_type`.*no effect"):
        IMPALAConfig.from_dict({"opt_type": "adam"})
    for key in ("decay", "momentum", "epsilon"):
        with pytest.warns(DeprecationWarning, match=f"`{key}` was an RMSProp setting"):
            IMPALAConfig.from_dict({key: 0.1})
    # DQN's own `epsilon` option is not an old key there.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert DQNConfig.from_dict({"epsilon": [[0, 1.0], [10, 0.1]]}).epsilon == [[0, 1.0], [10, 0.1]]


def test_old_key_and_its_new_option_together_is_an_error():
    with pytest.raises(UnknownOptionError, match="given twice"):
        PPOConfig.from_dict({"model": {"fcnet_hiddens": [8]}, "model_config": {"fcnet_hiddens": [4]}})


def test_seed_003_trial_config_maps_or_names_each_refused_key():
    """The trial config of seed 003's PBT log: every key maps, or the error names the key and its replacement."""
    config = {"model": {"custom_model": "my_model"}, "monitor": False, "min_iter_time_s": 30, "sample_batch_size": 40,
              "train_batch_size": 400, "horizon": 30000.0, "num_workers": 15, "num_gpus": 0.5, "log_level": "WARN",
              "opt_type": "rmsprop", "decay": 0.99, "momentum": 0.0, "epsilon": 0.1, "entropy_coeff": 0.006,
              "lr": 0.0033, "env_config": {"num_rows": 12}}
    refused = {"model": "RLModuleSpec", "num_gpus": "num_gpus_per_learner", "opt_type": "RMSprop"}
    for key, hint in refused.items():
        with pytest.raises(ValueError, match=hint):
            IMPALAConfig.from_dict({key: config[key]})
    accepted = {k: v for k, v in config.items() if k not in refused}
    with pytest.warns(DeprecationWarning):
        impala = IMPALAConfig.from_dict(accepted)
    assert (impala.min_time_s_per_iteration, impala.rollout_fragment_length, impala.horizon, impala.num_env_runners,
            impala.train_batch_size, impala.lr) == (30, 40, 30000, 15, 400, 0.0033)


def test_rllib_1x_trainer_names_are_todays_classes():
    """Seed 003's `ImpalaTrainer` (and RLlib 1.x's other `<Algo>Trainer` names and `Trainer`) at their old paths:
    `ImpalaTrainer(config={...})` with an old config dict trains."""
    from relayrl.agents.impala import ImpalaTrainer
    from relayrl.agents.ppo import PPOTrainer
    from relayrl.agents.trainer import Trainer
    from relayrl.algorithms.impala import IMPALA
    from relayrl.algorithms.ppo import PPO

    assert (ImpalaTrainer, PPOTrainer) == (IMPALA, PPO) and issubclass(ImpalaTrainer, Trainer)
    with pytest.warns(DeprecationWarning, match="sample_batch_size"):
        trainer = ImpalaTrainer(config={"env": "CartPole-v1", "sample_batch_size": 20, "train_batch_size": 40,
                                        "num_workers": 0, "logger_config": {"type": "none"}})
    try:
        assert trainer.train()["num_env_steps_trained_lifetime"] >= 40
    finally:
        trainer.stop()


def test_an_algorithms_validate_config_runs_before_anything_is_built():
    """The old stack's hook (seed 001's PPO overrides it): called with the validated config, and raising refuses it."""
    from relayrl.algorithms.ppo import PPO

    seen = []

    class MyPPO(PPO):
        def validate_config(self, config):
            super().validate_config(config)
            seen.append(config.lr)
            if config.lr > 0.1:
                raise ValueError("MyPPO needs lr <= 0.1")

    with pytest.raises(ValueError, match="needs lr <= 0.1"):
        MyPPO(config=tiny_ppo().training(lr=0.5))
    MyPPO(config=tiny_ppo().training(lr=0.01)).stop()
    assert seen == [0.5, 0.01]


# -- horizon, soft_horizon, no_done_at_end ---------------------------------------------------------------------

def _episodes(config, steps):
    algo = config.build_algo()
    try:
        return algo.env_runner.sample(num_timesteps=steps)
    finally:
        algo.stop()


def test_horizon_truncates_episodes():
    episodes = _episodes(tiny_ppo(episode_len=100).env_runners(horizon=7), 21)
    done = [e for e in episodes if e.is_done]
    assert done and all(len(e) == 7 and e.is_truncated and not e.is_terminated for e in done)
    # A new episode starts from a reset env: CountingEnv's observation counts from 0 again.
    assert all(float(e.get_observations(0)[0]) == 0.0 for e in episodes)


def test_soft_horizon_ends_the_episode_but_not_the_env():
    episodes = _episodes(tiny_ppo(episode_len=100).env_runners(horizon=7, soft_horizon=True), 21)
    starts = sorted(float(e.get_observations(0)[0]) for e in episodes)
    assert starts == [0.0, 7.0, 14.0]  # each episode goes on where the previous one was cut
    assert all(e.is_truncated for e in episodes if e.is_done)


def test_soft_horizon_needs_a_horizon():
    with pytest.raises(ValueError, match="needs a horizon"):
        tiny_ppo().env_runners(soft_horizon=True).build_algo()


def test_no_done_at_end_reports_truncated_instead_of_terminated():
    episodes = _episodes(tiny_ppo(episode_len=5).env_runners(no_done_at_end=True), 10)
    done = [e for e in episodes if e.is_done]
    assert len(done) == 2 and all(e.is_truncated and not e.is_terminated for e in done)


def test_foreach_env_sees_the_users_env_under_the_horizon_wrapper():
    algo = tiny_ppo().env_runners(horizon=3).build_algo()
    try:
        assert algo.env_runner.foreach_env(lambda env: type(env).__name__) == ["CountingEnv"]
        algo.env_runner.foreach_env(lambda env: env.set_task(2))
        assert algo.env_runner.foreach_env(lambda env: env.get_task()) == [2]
        algo.train()
    finally:
        algo.stop()


# -- evaluation: old keys and fields ------------------------------------------------------------------------------

class _InEvaluation(RLlibCallback):
    def on_episode_end(self, *, episode, env_runner, metrics_logger, **kwargs):
        episode.custom_metrics["in_eval"] = float(env_runner.policy_config["in_evaluation"])


def test_evaluation_results_have_episodes_this_iter_and_custom_metrics_and_in_evaluation():
    def custom_eval_function(algorithm, eval_workers):
        return {"env_runners": {"foo": 1}}

    config = tiny_ppo().evaluation(evaluation_interval=1, evaluation_duration=3).callbacks(_InEvaluation)
    algo = config.build_algo()
    try:
        result = algo.train()
        evaluation = result["evaluation"]["env_runners"]
        assert evaluation["episodes_this_iter"] == evaluation["num_episodes"] == 3
        assert evaluation["custom_metrics"]["in_eval_mean"] == 1.0
        assert result["env_runners"]["custom_metrics"]["in_eval_mean"] == 0.0
    finally:
        algo.stop()
    with pytest.warns(DeprecationWarning, match="custom_eval_function"):
        custom = tiny_ppo().update_from_dict({"custom_eval_function": custom_eval_function, "evaluation_interval": 1})
    algo = custom.build_algo()
    try:
        assert algo.train()["evaluation"] == {"env_runners": {"foo": 1}}
    finally:
        algo.stop()


def test_evaluation_without_custom_metrics_reports_an_empty_dict():
    algo = tiny_ppo().evaluation(evaluation_interval=1, evaluation_duration=1).build_algo()
    try:
        assert algo.train()["evaluation"]["env_runners"]["custom_metrics"] == {}
    finally:
        algo.stop()


@pytest.mark.parametrize("force_reset", [True, False])
def test_evaluation_force_reset_envs_before_iteration(force_reset):
    config = tiny_ppo(episode_len=100).evaluation(
        evaluation_interval=1, evaluation_duration=4, evaluation_duration_unit="timesteps",
        evaluation_force_reset_envs_before_iteration=force_reset)
    algo = config.build_algo()
    try:
        algo.train()
        algo.train()
        resets = algo.eval_env_runner_group.local_env_runner.foreach_env(lambda env: env.num_resets)
    finally:
        algo.stop()
    assert resets == ([2] if force_reset else [1])


def test_in_evaluation_key_of_configs():
    config = PPOConfig()
    assert config["in_evaluation"] is False
    assert config.evaluation(evaluation_interval=1).get_evaluation_config_object()["in_evaluation"] is True


def test_horizon_accepts_a_whole_float_and_refuses_others():
    assert PPOConfig.from_dict({"horizon": 30000.0}).horizon == 30000
    with pytest.raises(ValueError, match="horizon must be"):
        PPOConfig().env_runners(horizon=2.5)


def test_dict_space_env_is_untouched_by_the_wrapper():
    env_config = {"observation_space": gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,), np.float32)}),
                  "episode_len": 4}
    from relayrl.testing.envs import SpacesEnv

    from relayrl.connectors import FlattenObservations

    config = tiny_ppo().environment(SpacesEnv, env_config=env_config).env_runners(
        horizon=2, env_to_module_connector=lambda env, spaces, device: FlattenObservations())
    episodes = _episodes(config, 6)
    assert all(len(e) == 2 for e in episodes if e.is_done)
