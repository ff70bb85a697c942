"""Defaults resolved when an algorithm is built (relayrl/algorithms/resolved_defaults/): ale-py's vector env for
ALE/... ids where nothing in the run needs SYNC and a stateful module's sequence settings, only for options the user did not
set, said once, and stable through copies, dicts, checkpoints and Tune's reset_config."""
import logging

import pytest

from relayrl import APPOConfig, DefaultModelConfig, DQNConfig, IMPALAConfig, PPOConfig, SACConfig
from relayrl.algorithms import resolved_defaults
from relayrl.algorithms.resolved_defaults import resolve_defaults
from relayrl.algorithms.resolved_defaults.stateful_module import apply_stateful_module_defaults
from relayrl.algorithms.resolved_defaults.vector_mode import pick_vector_mode


def cartpole(**options) -> PPOConfig:
    return PPOConfig().environment("CartPole-v1").update_from_dict(options)


# -- which options the user set ----------------------------------------------------------------------

def test_builders_attributes_and_partial_dicts_mark_options_as_the_users():
    config = PPOConfig().training(lr=1e-3)
    config.gamma = 0.9
    config.update_from_dict({"minibatch_size": 64})  # the default value, but named: the user's
    assert all(config.is_given(name) for name in ("lr", "gamma", "minibatch_size"))
    assert not config.is_given("num_epochs") and not config.is_given("gym_env_vectorize_mode")
    assert config.copy().is_given("lr") and config.copy(copy_frozen=False).is_given("minibatch_size")


def test_a_dict_of_every_option_marks_only_values_other_than_the_defaults():
    """to_dict() (e.g. a Tune trial's config) cannot say which values were chosen."""
    as_dict = PPOConfig().environment("CartPole-v1").training(lr=1e-3).to_dict()
    config = PPOConfig.from_dict(as_dict)
    assert config.is_given("lr") and config.is_given("env")
    assert not config.is_given("minibatch_size") and not config.is_given("gym_env_vectorize_mode")


# -- the vector env -----------------------------------------------------------------------------------

def pong(**options) -> PPOConfig:
    pytest.importorskip("ale_py.vector_env")
    return PPOConfig().environment("ALE/Pong-v5").update_from_dict(options)


def test_pong_with_eight_envs_gets_ale_pys_vector_env_and_a_line_that_says_so():
    config = pong()
    note = pick_vector_mode(config)
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT" and not config.is_given("gym_env_vectorize_mode")
    assert "ALE/Pong-v5's own vector env" in note and "gym_env_vectorize_mode='SYNC'" in note
    assert pick_vector_mode(config) is None  # resolved: nothing more to do


def test_cartpole_keeps_sync_although_it_has_a_vector_entry_point():
    """CartPole's own vector env gained 2-5% with the defaults, and SYNC resumes episodes exactly, keeps RLlib's
    seeded episodes and the sub-envs RLlib code reaches (docs/vector_envs.md#when-the-mode-is-picked-for-you)."""
    config = cartpole()
    assert pick_vector_mode(config) is None and config.gym_env_vectorize_mode == "SYNC"


@pytest.mark.parametrize("options", [
    {"gym_env_vectorize_mode": "SYNC"},  # named: kept
    {"gym_env_vectorize_mode": "ASYNC"},
    {"num_envs_per_env_runner": 1},  # one env gains nothing
    {"num_env_runners": 2},  # ale-py starts a thread per core in each runner
    {"horizon": 100},  # wraps each sub-env
    {"record_video_every_n_episodes": 10},
    {"evaluation_interval": 1, "evaluation_config": {"horizon": 50}},  # the evaluation's envs too
    {"evaluation_interval": 1, "evaluation_config": {"env": "ALE/Breakout-v5"}},  # another env to evaluate on
    {"restart_failed_sub_environments": True},
    {"env_config": {"atari_preprocessing": False}},  # ale-py's vector env always preprocesses
])
def test_sync_is_kept_where_the_run_names_it_or_needs_it(options):
    config = pong(**options)
    before = config.gym_env_vectorize_mode
    assert pick_vector_mode(config) is None
    assert config.gym_env_vectorize_mode == before


def test_a_multi_agent_run_keeps_sync():
    config = pong().multi_agent(policies={"default_policy"})
    assert pick_vector_mode(config) is None and config.gym_env_vectorize_mode == "SYNC"


def small_pong() -> PPOConfig:
    return pong(train_batch_size=64, minibatch_size=32, num_epochs=1, num_envs_per_env_runner=2)


def test_the_built_algorithm_samples_with_it_and_says_so_once(caplog, monkeypatch):
    monkeypatch.setattr(resolved_defaults, "_said", set())  # as in a fresh process
    config = small_pong()
    with caplog.at_level(logging.WARNING, logger="relayrl"):
        first, second = config.build_algo(), config.build_algo()
    try:
        assert type(first.env_runner.env.unwrapped).__name__ == "AtariVectorEnv"
        assert first.config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
        assert first.resolved_defaults and first.resolved_defaults == second.resolved_defaults
        assert config.gym_env_vectorize_mode == "SYNC"  # the user's config is left as it was
        assert [r.getMessage() for r in caplog.records].count("relayrl: " + first.resolved_defaults[0]) == 1
        with pytest.raises(ValueError, match="gym_env_vectorize_mode='SYNC'"):
            first.env_runner_group.foreach_env(lambda env: env)
    finally:
        first.stop()
        second.stop()


def test_a_checkpoint_restores_the_mode_its_run_sampled_with(tmp_path):
    algo = small_pong().env_runners(gym_env_vectorize_mode="SYNC").build_algo()
    try:
        algo.save_to_path(tmp_path)
    finally:
        algo.stop()
    from relayrl import Algorithm

    restored = Algorithm.from_checkpoint(tmp_path)
    try:
        assert restored.config.gym_env_vectorize_mode == "SYNC" and restored.resolved_defaults == []
    finally:
        restored.stop()


def test_resolving_a_resolved_config_or_its_dict_changes_nothing():
    config = pong()
    assert resolve_defaults(config, log=False)
    assert resolve_defaults(config.copy(copy_frozen=False), log=False) == []
    again = PPOConfig.from_dict(config.to_dict())  # e.g. a Tune trial's config of a built algorithm
    assert resolve_defaults(again, log=False) == [] and again.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    fresh = PPOConfig.from_dict(pong().to_dict())  # a Tune trial of a config not built yet
    assert resolve_defaults(fresh, log=False) and fresh.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"


def test_reset_config_with_a_tune_dict_of_the_unresolved_config_changes_only_what_it_names():
    config = small_pong()
    algo = config.build_algo()
    try:
        assert algo.reset_config({**config.to_dict(), "lr": 1e-3}) is True
        assert algo.config.lr == 1e-3 and algo.config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    finally:
        algo.stop()


# -- a stateful module's defaults -------------------------------------------------------------------------

def stateless(model_config, config_class=PPOConfig, **options):
    from relayrl.testing import StatelessCartPole

    return config_class().environment(StatelessCartPole).rl_module(model_config=model_config).update_from_dict(options)


@pytest.mark.parametrize("model_config", [DefaultModelConfig(use_lstm=True), {"use_lstm": True}])
def test_use_lstm_alone_gets_the_measured_sequence_settings_and_a_line_listing_them(model_config):
    config = stateless(model_config)
    note = apply_stateful_module_defaults(config)
    assert note.startswith("PPO with a stateful module (use_lstm=True) uses the defaults measured for it")
    assert (config.rollout_fragment_length, config.train_batch_size, config.minibatch_size) == (32, 1024, 8 * 33)
    assert config.lr == 1e-3 and config.observation_filter == "MeanStdFilter"
    model = config.model_config
    assert model["max_seq_len"] == 33 and model["lstm_cell_size"] == 64 and model["fcnet_hiddens"] == []
    assert model["vf_share_layers"] is False and model["head_fcnet_hiddens"] == [64]
    assert apply_stateful_module_defaults(config) is None  # resolved: nothing more to do
    assert not config.is_given("lr") and "lr=0.001" in note and "max_seq_len=33" in note


def test_values_the_user_set_win_and_the_sequences_follow_them():
    config = stateless(DefaultModelConfig(use_lstm=True, lstm_cell_size=128), lr=3e-4, rollout_fragment_length=16)
    apply_stateful_module_defaults(config)
    assert config.lr == 3e-4 and config.model_config["lstm_cell_size"] == 128  # the user's
    assert config.rollout_fragment_length == 16 and config.model_config["max_seq_len"] == 17  # a fragment + 1
    assert config.minibatch_size == 8 * 17 and config.train_batch_size == 1024  # whole sequences; the default
    config = stateless({"use_lstm": True, "max_seq_len": 20}, minibatch_size=100)
    apply_stateful_module_defaults(config)
    assert config.rollout_fragment_length == 19 and config.minibatch_size == 100
    later = DefaultModelConfig(use_lstm=True)
    later.max_seq_len = 10  # set after it was made: the user's too
    config = stateless(later)
    apply_stateful_module_defaults(config)
    assert config.model_config["max_seq_len"] == 10 and config.rollout_fragment_length == 9


def test_a_train_batch_too_small_for_the_fragments_keeps_the_users_sampling():
    config = stateless({"use_lstm": True}, train_batch_size=100, minibatch_size=50)
    apply_stateful_module_defaults(config)
    config.validate()
    assert config.rollout_fragment_length == "auto" and "max_seq_len" not in config.model_config


def test_a_module_without_memory_keeps_the_algorithms_defaults():
    config = stateless({"fcnet_hiddens": [32]})
    assert apply_stateful_module_defaults(config) is None and config.lr == 3e-4 and config.minibatch_size == 64


def test_the_built_algorithm_trains_with_them_and_a_checkpoint_keeps_them(tmp_path):
    from relayrl import Algorithm

    config = stateless({"use_lstm": True, "lstm_cell_size": 8}, train_batch_size=256, num_epochs=1)
    algo = config.build_algo()
    try:
        assert algo.config.rollout_fragment_length == 32 and algo.config.observation_filter == "MeanStdFilter"
        assert algo.config.minibatch_size == 7 * 33  # whole sequences, as many as the batch holds up to 8
        assert "MeanStdFilter" in [piece.name for piece in algo.env_runner._env_to_module.connectors]
        algo.train()
        algo.save_to_path(tmp_path)
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(tmp_path)
    try:
        assert restored.resolved_defaults == [] and restored.config.rollout_fragment_length == 32
        assert restored.config.model_config["max_seq_len"] == 33 and restored.config.lr == 1e-3
    finally:
        restored.stop()


@pytest.mark.parametrize("model_config", [DefaultModelConfig(use_lstm=True), {"use_lstm": True}])
def test_appo_with_use_lstm_alone_gets_its_measured_settings(model_config):
    config = stateless(model_config, APPOConfig)
    note = apply_stateful_module_defaults(config)
    assert note.startswith("APPO with a stateful module (use_lstm=True) uses the defaults measured for it")
    assert (config.num_envs_per_env_runner, config.rollout_fragment_length) == (32, 32)
    assert config.minibatch_size is None  # the whole batch per update: V-trace's chunks stay whole
    assert (config.lr, config.gamma, config.vf_loss_coeff, config.entropy_coeff) == (1e-3, 0.98, 0.5, 0.0)
    assert config.observation_filter == "MeanStdFilter"
    model = config.model_config
    assert model["max_seq_len"] == 33 and model["lstm_cell_size"] == 64 and model["fcnet_hiddens"] == []
    assert model["vf_share_layers"] is False and model["head_fcnet_hiddens"] == [64]
    config.validate()
    assert apply_stateful_module_defaults(config) is None


def test_appo_keeps_the_users_values():
    config = stateless(DefaultModelConfig(use_lstm=True, lstm_cell_size=16), APPOConfig, lr=3e-4,
                       rollout_fragment_length=16, num_envs_per_env_runner=4, minibatch_size=64)
    apply_stateful_module_defaults(config)
    assert (config.lr, config.num_envs_per_env_runner, config.minibatch_size) == (3e-4, 4, 64)
    assert config.model_config["lstm_cell_size"] == 16 and config.model_config["max_seq_len"] == 17
    assert config.gamma == 0.98 and config.observation_filter == "MeanStdFilter"  # what the user left


def test_appos_stateful_defaults_stay_its_own_beside_impalas():
    """APPOConfig extends IMPALAConfig and keeps its own measured values (the same as IMPALA's today)."""
    appo = stateless({"use_lstm": True}, APPOConfig)
    apply_stateful_module_defaults(appo)
    assert (appo.lr, appo.num_envs_per_env_runner, appo.rollout_fragment_length, appo.gamma) == (1e-3, 32, 32, 0.98)
    assert (appo.vf_loss_coeff, appo.entropy_coeff, appo.observation_filter) == (0.5, 0.0, "MeanStdFilter")
    assert appo.model_config["max_seq_len"] == 33 and appo.model_config["lstm_cell_size"] == 64


@pytest.mark.parametrize("model_config", [DefaultModelConfig(use_lstm=True), {"use_lstm": True}])
def test_impala_with_use_lstm_alone_gets_its_measured_settings(model_config):
    config = stateless(model_config, IMPALAConfig)
    note = apply_stateful_module_defaults(config)
    assert note.startswith("IMPALA with a stateful module (use_lstm=True) uses the defaults measured for it")
    assert (config.num_envs_per_env_runner, config.rollout_fragment_length) == (32, 32)
    assert config.minibatch_size is None  # the whole batch per update: V-trace's chunks stay whole
    assert (config.lr, config.gamma, config.vf_loss_coeff, config.entropy_coeff) == (1e-3, 0.98, 0.5, 0.0)
    assert config.observation_filter == "MeanStdFilter" and config.train_batch_size == 500  # IMPALA's
    model = config.model_config
    assert model["max_seq_len"] == 33 and model["lstm_cell_size"] == 64 and model["fcnet_hiddens"] == []
    assert model["vf_share_layers"] is False and model["head_fcnet_hiddens"] == [64]
    config.validate()
    assert apply_stateful_module_defaults(config) is None and not config.is_given("lr")


def test_impala_keeps_the_users_values_and_its_feed_forward_defaults_without_memory():
    config = stateless(DefaultModelConfig(use_lstm=True, lstm_cell_size=16), IMPALAConfig, lr=5e-4,
                       rollout_fragment_length=16, num_envs_per_env_runner=4, gamma=0.99)
    apply_stateful_module_defaults(config)
    assert (config.lr, config.num_envs_per_env_runner, config.gamma) == (5e-4, 4, 0.99)  # the user's
    assert config.model_config["lstm_cell_size"] == 16 and config.model_config["max_seq_len"] == 17
    assert config.vf_loss_coeff == 0.5 and config.observation_filter == "MeanStdFilter"  # what the user left
    feed_forward = stateless({"fcnet_hiddens": [32]}, IMPALAConfig)
    assert apply_stateful_module_defaults(feed_forward) is None
    assert (feed_forward.rollout_fragment_length, feed_forward.lr) == (50, 4e-3)
    assert feed_forward.num_envs_per_env_runner == 10
    assert (feed_forward.vf_loss_coeff, feed_forward.observation_filter) == (0.05, "NoFilter")


def test_appo_built_with_use_lstm_trains_with_its_defaults():
    config = stateless({"use_lstm": True, "lstm_cell_size": 8}, APPOConfig, num_envs_per_env_runner=2,
                       min_sample_timesteps_per_iteration=0)
    algo = config.build_algo()
    try:
        assert algo.config.rollout_fragment_length == 32 and algo.config.model_config["max_seq_len"] == 33
        assert "MeanStdFilter" in [piece.name for piece in algo.env_runner._env_to_module.connectors]
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 500  # 2 envs x 32 steps per sample, to the batch's 500
        assert any(line.startswith("APPO with a stateful module") for line in algo.resolved_defaults)
    finally:
        algo.stop()


def test_impala_built_with_use_lstm_trains_with_its_defaults():
    config = stateless({"use_lstm": True, "lstm_cell_size": 8}, IMPALAConfig, num_envs_per_env_runner=2,
                       min_sample_timesteps_per_iteration=0)
    algo = config.build_algo()
    try:
        assert algo.config.rollout_fragment_length == 32 and algo.config.model_config["max_seq_len"] == 33
        assert algo.config.lr == 1e-3 and algo.config.model_config["lstm_cell_size"] == 8
        assert "MeanStdFilter" in [piece.name for piece in algo.env_runner._env_to_module.connectors]
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 500  # 2 envs x 32 steps per sample, to the batch's 500
        assert any(line.startswith("IMPALA with a stateful module") for line in algo.resolved_defaults)
    finally:
        algo.stop()


@pytest.mark.parametrize("model_config", [DefaultModelConfig(use_lstm=True), {"use_lstm": True}])
def test_dqn_with_use_lstm_alone_gets_its_measured_settings(model_config):
    config = stateless(model_config, DQNConfig)
    note = apply_stateful_module_defaults(config)
    assert note.startswith("DQN with a stateful module (use_lstm=True) uses the defaults measured for it")
    assert (config.train_batch_size, config.burn_in_len, config.training_intensity) == (16, 8, 64)
    assert config.lr == 1e-4 and config.observation_filter == "MeanStdFilter"
    model = config.model_config
    assert model["lstm_cell_size"] == 64 and model["fcnet_hiddens"] == [64] and model["fcnet_activation"] == "tanh"
    assert model["head_fcnet_hiddens"] == [64] and model["lstm_kernel_initializer"] == "xavier_uniform_"
    assert model.get("max_seq_len", 20) == 20 and config.rollout_fragment_length == "auto"  # DQN's own
    assert (config.n_step, config.num_envs_per_env_runner, config.target_network_update_freq) == (3, 8, 500)
    assert config.replay_buffer_config == {"type": "EpisodeReplayBuffer", "capacity": 50000}
    config.validate()
    assert apply_stateful_module_defaults(config) is None


def test_dqn_keeps_the_users_values_and_drops_a_burn_in_their_sequences_cannot_hold():
    config = stateless(DefaultModelConfig(use_lstm=True, lstm_cell_size=16, max_seq_len=12), DQNConfig,
                       lr=1e-3, train_batch_size=32, burn_in_len=2)
    apply_stateful_module_defaults(config)
    assert (config.lr, config.train_batch_size, config.burn_in_len) == (1e-3, 32, 2)
    assert config.model_config["lstm_cell_size"] == 16 and config.model_config["max_seq_len"] == 12
    assert config.training_intensity == 64 and config.model_config["fcnet_hiddens"] == [64]  # what the user left
    short = stateless({"use_lstm": True, "max_seq_len": 6}, DQNConfig)
    apply_stateful_module_defaults(short)
    short.validate()  # burn_in_len 8 would leave no step of a 6-step sequence to train: DQN's 0 stays
    assert short.burn_in_len == 0 and short.train_batch_size == 16


def test_a_feed_forward_dqn_and_sac_keep_their_defaults():
    dqn = stateless({"fcnet_hiddens": [32]}, DQNConfig)
    assert apply_stateful_module_defaults(dqn) is None
    assert (dqn.lr, dqn.train_batch_size, dqn.burn_in_len, dqn.training_intensity) == (5e-4, 64, 0, 16)
    assert dqn.observation_filter == "NoFilter"
    sac = SACConfig().environment("Pendulum-v1").rl_module(model_config={"use_lstm": True})
    assert apply_stateful_module_defaults(sac) is None  # DQN's stateful defaults are not SAC's
    assert (sac.train_batch_size, sac.burn_in_len, sac.observation_filter) == (64, 0, "NoFilter")


def test_dqn_built_with_use_lstm_trains_with_its_defaults(tmp_path):
    from relayrl import Algorithm

    config = stateless({"use_lstm": True, "lstm_cell_size": 8}, DQNConfig, num_envs_per_env_runner=2,
                       num_steps_sampled_before_learning_starts=16, min_sample_timesteps_per_iteration=0,
                       training_intensity=320)
    algo = config.build_algo()
    try:
        assert (algo.config.train_batch_size, algo.config.burn_in_len, algo.config.lr) == (16, 8, 1e-4)
        assert "MeanStdFilter" in [piece.name for piece in algo.env_runner._env_to_module.connectors]
        for _ in range(6):  # 2 envs x 3 steps per train(): updates of 16 x 20 replayed steps from the 18th step on
            result = algo.train()
        assert result["num_env_steps_trained_lifetime"] >= 16 * 20
        assert any(line.startswith("DQN with a stateful module") for line in algo.resolved_defaults)
        algo.save_to_path(tmp_path)
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(tmp_path)
    try:
        assert restored.resolved_defaults == [] and restored.config.burn_in_len == 8
        assert restored.config.model_config["lstm_cell_size"] == 8 and restored.config.train_batch_size == 16
    finally:
        restored.stop()


# -- observation_filter -----------------------------------------------------------------------------------

def test_observation_filter_puts_a_mean_std_filter_first_and_refuses_images_when_asked_for():
    from relayrl.connectors.env_to_module.observation_filter import observation_filter_pieces
    from relayrl.testing import DotSideEnv

    vector = cartpole(observation_filter="MeanStdFilter")
    assert [p.name for p in observation_filter_pieces(vector, vector_space())] == ["MeanStdFilter"]
    assert observation_filter_pieces(cartpole(), vector_space()) == []
    images = DotSideEnv().observation_space
    with pytest.raises(ValueError, match="observation_filter='NoFilter'"):
        observation_filter_pieces(vector, images)
    resolved = cartpole()
    resolved._set_options({"observation_filter": "MeanStdFilter"}, given=False)  # a stateful module's default
    assert observation_filter_pieces(resolved, images) == []  # the CNN scales images itself


def vector_space():
    import gymnasium as gym

    return gym.make("CartPole-v1").observation_space
