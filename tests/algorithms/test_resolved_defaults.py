"""Defaults resolved when an algorithm is built (relayrl/algorithms/resolved_defaults/): the env's own vector env
where nothing in the run needs SYNC, only for options the user did not set, said once, and stable through copies,
dicts, checkpoints and Tune's reset_config."""
import logging

import pytest

from relayrl import PPOConfig
from relayrl.algorithms import resolved_defaults
from relayrl.algorithms.resolved_defaults import resolve_defaults
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

def test_cartpole_with_eight_envs_gets_its_own_vector_env_and_a_line_that_says_so():
    config = cartpole()
    note = pick_vector_mode(config)
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT" and not config.is_given("gym_env_vectorize_mode")
    assert "CartPole-v1's own vector env" in note and "gym_env_vectorize_mode='SYNC'" in note
    assert pick_vector_mode(config) is None  # resolved: nothing more to do


@pytest.mark.parametrize("options", [
    {"gym_env_vectorize_mode": "SYNC"},  # named: kept
    {"gym_env_vectorize_mode": "ASYNC"},
    {"num_envs_per_env_runner": 1},  # one env gains nothing
    {"horizon": 100},  # wraps each sub-env
    {"record_video_every_n_episodes": 10},
    {"evaluation_interval": 1, "evaluation_config": {"horizon": 50}},  # the evaluation's envs too
    {"evaluation_interval": 1, "evaluation_config": {"env": "Pendulum-v1"}},  # another env to evaluate on
    {"restart_failed_sub_environments": True},
    {"env": "Pendulum-v1"},  # no vector entry point
    {"env_config": {"render_fps": 30}},  # a key CartPole's vector env does not take
    {"env": "phys2d/CartPole-v1"},  # its vector env needs jax
])
def test_sync_is_kept_where_the_run_names_it_or_needs_it(options):
    config = cartpole(**options)
    before = config.gym_env_vectorize_mode
    assert pick_vector_mode(config) is None
    assert config.gym_env_vectorize_mode == before


def test_env_config_keys_the_vector_env_takes_keep_it():
    config = cartpole(env_config={"max_episode_steps": 200})
    assert pick_vector_mode(config) and config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"


def test_a_multi_agent_run_keeps_sync():
    config = cartpole().multi_agent(policies={"default_policy"})
    assert pick_vector_mode(config) is None and config.gym_env_vectorize_mode == "SYNC"


def test_atari_gets_ale_pys_vector_env_only_when_sampling_in_this_process():
    pytest.importorskip("ale_py.vector_env")
    assert "ALE/Pong-v5's own vector env" in pick_vector_mode(PPOConfig().environment("ALE/Pong-v5"))
    remote = PPOConfig().environment("ALE/Pong-v5").env_runners(num_env_runners=2)
    assert pick_vector_mode(remote) is None and remote.gym_env_vectorize_mode == "SYNC"


def test_the_built_algorithm_samples_with_it_and_says_so_once(caplog, monkeypatch):
    monkeypatch.setattr(resolved_defaults, "_said", set())  # as in a fresh process
    config = cartpole(train_batch_size=64, minibatch_size=32, num_epochs=1, num_envs_per_env_runner=2)
    with caplog.at_level(logging.WARNING, logger="relayrl"):
        first, second = config.build_algo(), config.build_algo()
    try:
        assert type(first.env_runner.env).__name__ == "CartPoleVectorEnv"
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
    config = cartpole(train_batch_size=64, minibatch_size=32, num_epochs=1, num_envs_per_env_runner=2)
    algo = config.env_runners(gym_env_vectorize_mode="SYNC").build_algo()
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
    config = cartpole()
    assert resolve_defaults(config, log=False)
    assert resolve_defaults(config.copy(copy_frozen=False), log=False) == []
    again = PPOConfig.from_dict(config.to_dict())  # e.g. a Tune trial's config of a built algorithm
    assert resolve_defaults(again, log=False) == [] and again.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    fresh = PPOConfig.from_dict(cartpole().to_dict())  # a Tune trial of a config not built yet
    assert resolve_defaults(fresh, log=False) and fresh.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"


def test_reset_config_with_a_tune_dict_of_the_unresolved_config_changes_only_what_it_names():
    config = cartpole(train_batch_size=64, minibatch_size=32, num_epochs=1, num_envs_per_env_runner=2)
    algo = config.build_algo()
    try:
        assert algo.reset_config({**config.to_dict(), "lr": 1e-3}) is True
        assert algo.config.lr == 1e-3 and algo.config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    finally:
        algo.stop()
