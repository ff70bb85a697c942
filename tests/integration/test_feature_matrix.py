"""Runs the feature matrix (feature_matrix.py): every cell works or is refused at build time with its error.

One test per (algorithm, env kind) runs the default-run features on one algorithm (two train() iterations with
evaluation on, compute_single_action, save -> fresh algorithm -> restore -> train); one more the LSTM cell. The
remote-runner and Tune cells run together (a Tune trial on 2 remote runners), slow-marked, on the cross
fm.SLOW_CROSS within CI's budget; RELAYRL_FULL_MATRIX=1 runs them on every (algorithm, env kind).
"""
from contextlib import contextmanager

import numpy as np
import pytest

import feature_matrix as fm
from matrix_checks import refused

PAIRS = [(a, e) for a in fm.ALGORITHMS for e in fm.ENV_KINDS]


def _check_action(algo, config, action):
    assert action is not None and np.all(np.isfinite(np.asarray(action, dtype=np.float64)))


@pytest.mark.parametrize("algo, env_kind", PAIRS)
def test_train_evaluate_act_and_restore(algo, env_kind, tmp_path):
    config = fm.make_config(algo, env_kind, evaluation=fm.refusal(algo, env_kind, "evaluation") is None)
    if refused(algo, env_kind, "train", config.build_algo):
        return
    algo_obj = config.build_algo()
    try:
        algo_obj.train()
        result = algo_obj.train()
        assert result["training_iteration"] == 2 and result["num_env_steps_sampled_lifetime"] > 0
        if fm.refusal(algo, env_kind, "evaluation") is None:
            assert result["evaluation"]["env_runners"]["num_env_steps_sampled"] > 0
        if fm.refusal(algo, env_kind, "compute_single_action") is None:
            obs, policy_id = fm.raw_observation(algo, env_kind, config)
            _check_action(algo, config, algo_obj.compute_single_action(obs, policy_id=policy_id, explore=False))
        path = algo_obj.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo_obj.stop()
    if fm.refusal(algo, env_kind, "checkpoint_restore") is None:
        with _pending(algo, env_kind, "checkpoint_restore"):
            fresh = config.build_algo()
            try:
                fresh.restore_from_path(path)
                assert fresh.train()["training_iteration"] == 3
            finally:
                fresh.stop()


@contextmanager
def _pending(algo, env_kind, feature):
    """A cell in fm.PENDING must still fail (then the test xfails); one that works must leave PENDING."""
    why = fm.pending(algo, env_kind, feature)
    if why is None:
        yield
        return
    try:
        yield
    except Exception as error:
        pytest.xfail(f"{why}: {type(error).__name__}: {error}")
    pytest.fail(f"the pending cell {(algo, env_kind, feature)} works now: remove it from feature_matrix.PENDING")


@pytest.mark.parametrize("algo, env_kind", PAIRS)
def test_lstm(algo, env_kind):
    config = fm.make_config(algo, env_kind, lstm=True)
    if refused(algo, env_kind, "lstm", config.build_algo):
        return
    algo_obj = config.build_algo()
    try:
        assert algo_obj.train()["num_env_steps_sampled_lifetime"] > 0
    finally:
        algo_obj.stop()


@pytest.mark.slow
@pytest.mark.parametrize("algo, env_kind", fm.slow_pairs())
def test_a_tune_trial_with_two_remote_runners(algo, env_kind, ray_local, tmp_path):
    """The remote_runners and tune cells in one run: a Tune trial of the algorithm sampling on 2 Ray EnvRunners."""
    from ray import tune

    config = fm.make_config(algo, env_kind, remote=2)
    for feature in ("remote_runners", "tune"):
        if refused(algo, env_kind, feature, config.build_algo):
            return
    tuner = tune.Tuner(config.algo_class, param_space=config,
                       run_config=tune.RunConfig(stop={"training_iteration": 1}, storage_path=str(tmp_path),
                                                 verbose=0))
    results = tuner.fit()
    assert not results.errors, results.errors
    metrics = results[0].metrics
    assert metrics["training_iteration"] == 1 and metrics["num_env_steps_sampled_lifetime"] > 0
    assert metrics["num_healthy_env_runners"] == 2


def test_the_docs_table_is_current():
    with open(fm.DOCS_PATH) as f:
        assert f.read() == fm.table(), "docs/feature_matrix.md is stale: run python tests/integration/feature_matrix.py"


def test_the_matrix_has_every_cell():
    assert len(fm.cells()) == 6 * 9 * 10
    for algo, env_kind, feature in fm.REFUSED:  # every declared refusal names real cells
        assert env_kind in fm.ENV_KINDS + ("*",)
        assert (algo in fm.ALGORITHMS + ("*",) and feature in fm.FEATURES) or \
            (algo in fm.OFFLINE_ALGORITHMS and feature == fm.OFFLINE_FEATURE)
