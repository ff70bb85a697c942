"""A stateful module gets observation_filter='MeanStdFilter' by default; a user who normalises the RLlib way (a
MeanStdFilter in env_to_module_connector) got a second filter on top of theirs, silently (observations normalised
twice). The default steps aside for the user's filter: in a built algorithm, in one Tune builds from a dict, and in
one restored from a checkpoint (whose filter statistics come back into the one filter)."""
import numpy as np

from relayrl import Algorithm, PPO, PPOConfig
from relayrl.connectors import MeanStdFilter
from relayrl.testing.envs import CountingEnv


def users_filter(env=None, spaces=None, device=None):
    return MeanStdFilter()


def _config(**model):
    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": 5})
            .env_runners(env_to_module_connector=users_filter, num_envs_per_env_runner=1)
            .training(train_batch_size=24, minibatch_size=12, num_epochs=1)
            .rl_module(model_config={"use_lstm": True, "lstm_cell_size": 4, "max_seq_len": 4, "fcnet_hiddens": [4],
                                     **model})
            .debugging(seed=0))


def _filters(algo):
    return [p for p in algo.env_runner._env_to_module.connectors if isinstance(p, MeanStdFilter)]


def test_one_filter_with_a_users_filter_and_an_lstm(tmp_path):
    algo = _config().build_algo()
    try:
        assert algo.config.observation_filter == "MeanStdFilter"  # (the stateful default, resolved)
        assert len(_filters(algo)) == 1
        algo.train()
        count = _filters(algo)[0].get_state()
        path = algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[CountingEnv, users_filter])
    try:
        assert len(_filters(restored)) == 1
        assert str(_filters(restored)[0].get_state()) == str(count)  # the statistics came back
    finally:
        restored.stop()


def test_one_filter_when_tune_builds_from_a_dict():
    algo = PPO(config=_config().to_dict())
    try:
        assert len(_filters(algo)) == 1
    finally:
        algo.stop()


def test_a_filter_the_user_asks_for_is_kept():
    algo = _config().env_runners(observation_filter="MeanStdFilter").build_algo()
    try:
        assert len(_filters(algo)) == 2  # asked for both: the user's choice
    finally:
        algo.stop()


def test_without_a_users_filter_the_default_filter_stays():
    algo = _config().env_runners(env_to_module_connector=None).build_algo()
    try:
        assert len(_filters(algo)) == 1
        assert np.isfinite(algo.train()["env_runners"]["episode_return_mean"])
    finally:
        algo.stop()


def test_a_checkpoint_with_both_filters_loads_into_one(tmp_path):
    """A run saved with both filters (before the default stepped aside, or asked for) restores into a pipeline
    with the user's filter only: it takes the first filter's statistics (of the raw observations)."""
    algo = _config().env_runners(observation_filter="MeanStdFilter").build_algo()
    try:
        algo.train()
        raw_stats = _filters(algo)[0].get_state()
        path = algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[CountingEnv, users_filter],
                                         config_overrides={"observation_filter": "NoFilter"})
    try:
        assert len(_filters(restored)) == 1
        assert str(_filters(restored)[0].get_state()) == str(raw_stats)
        restored.train()
    finally:
        restored.stop()
