"""Test-suite wide fixtures."""
import os
import sys

import pytest

# One torch thread in the tests (and the processes they start): their networks are tiny, and on a machine shared
# with other jobs threads that wait for each other stall. relayrl's own choice of threads (learner/torch_threads.py)
# is tested on its own (tests/learner/test_torch_threads.py); a test may still set the variable itself.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session", autouse=True)
def _results_dir_in_tmp(tmp_path_factory):
    """Algorithms built without logger_config write under $RELAYRL_RESULTS_DIR: keep that out of
    the home directory (subprocesses started by tests inherit it)."""
    old = os.environ.get("RELAYRL_RESULTS_DIR")
    os.environ["RELAYRL_RESULTS_DIR"] = str(tmp_path_factory.mktemp("relayrl_results"))
    yield
    if old is None:
        os.environ.pop("RELAYRL_RESULTS_DIR", None)
    else:
        os.environ["RELAYRL_RESULTS_DIR"] = old


@pytest.fixture(scope="module", autouse=True)
def _no_ray_left_running():
    """A test that makes relayrl start Ray (remote runners) must not leave its actors holding the
    CPUs of the next module's Ray instance."""
    yield
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


# Tests moved to the slow run (CI runs it too) to keep the default run near 10 minutes on a 2-core machine:
# each takes 7-21 s there (measured 2026-12-04, `pytest --durations`, a quiet 2-core machine), mostly starting Ray
# or Tune, and each has a quicker neighbour in the default run covering the same path.
MOVED_TO_SLOW = {
    "tests/porting/test_rllib_style_scripts.py::test_script_runs_after_replacing_ray_rllib[pbt.py.txt]",
    "tests/porting/test_rllib_style_scripts.py::test_script_runs_after_replacing_ray_rllib[tune_algo_by_name.py.txt]",
    "tests/test_benchmarks.py::test_quick_run_without_peers_prints_the_table_and_writes_the_json",
    "tests/porting/test_seed_snippets.py::test_000_curriculum_callback_through_tune_by_name",
    "tests/test_example_script.py::test_through_tune_returns_tunes_result_grid",
    "tests/tune/test_trainable_bridge.py::test_algorithm_names_survive_a_ray_restart",
    "tests/test_examples.py::test_example_runs[shared_counter]",
    "tests/test_examples.py::test_example_runs[parallel_evaluation]",
    "tests/test_examples.py::test_example_runs[custom_evaluation]",
    "tests/test_examples.py::test_example_runs[policy_gradient_tf_policy]",
    "tests/algorithms/test_registry.py::test_a_toy_algorithm_needs_one_entry_and_shows_in_the_cli_and_tune",
    "tests/algorithms/test_ppo_learning.py::test_ppo_cartpole_reaches_450_within_300k_steps_with_rllibs_tuned_settings",
    "tests/tune/test_tuner.py::test_tuner_over_a_config_with_a_grid_search",
    "tests/distributed/test_fault_tolerance.py::test_failed_runner_is_restarted_and_training_goes_on[hang-extra2]",
    "tests/distributed/test_fault_tolerance.py::test_failed_evaluation_runner_is_restarted",
    "tests/distributed/test_impala_remote.py::test_killed_runner_is_restarted_while_the_other_samples",
    "tests/reliability/test_env_runner_failure_tolerance.py::"
    "test_remote_runner_failing_every_sample_stops_the_run_with_its_traceback",
    "tests/test_evaluation.py::test_duration_and_rounding[episodes-10-1-40-expected_per_runner1]",
    # Measured 13-25 s each under load (2026-12-04 19:20, `--durations=120`, the default run at 22 min with two
    # helpers' runs beside it): the default run's slowest. The PPO defaults' learning test is also CI's main job.
    "tests/algorithms/test_ppo_learning.py::test_ppo_cartpole_reaches_450_within_100k_steps_with_relayrls_defaults",
    "tests/test_evaluation.py::test_duration_and_rounding[episodes-10-3-40-expected_per_runner2]",
    "tests/test_evaluation.py::test_duration_and_rounding[timesteps-10-3-12-expected_per_runner6]",
    "tests/porting/test_rllib_example_scripts.py::test_quick_scripts_run[connectors/multi_agent_observation_preprocessor.py]",
    "tests/porting/test_rllib_example_scripts.py::test_quick_scripts_run[algorithms/vpg_custom_algorithm.py]",
    "tests/tune/test_registered_env_names.py::test_a_registered_name_reaches_remote_env_runners[relayrl]",
    "tests/porting/test_rllib_style_scripts.py::test_script_runs_after_replacing_ray_rllib[action_masking.py.txt]",
    "tests/distributed/test_remote_env_runners.py::test_the_remote_recording_runner_names_the_iteration_in_its_videos",
    "tests/distributed/test_ppo_remote_train_columns.py::"
    "test_two_remote_learners_each_finish_the_whole_batch_and_stay_equal",
    "tests/distributed/test_impala_remote.py::test_a_slow_runner_does_not_set_the_pace",
}


# With `-n auto` (pytest-xdist; `--dist loadgroup` is in pyproject.toml) the tests of one module in these folders stay
# on one worker: they share the module's Ray instance (tests/distributed/conftest.py and the like, or the one relayrl
# started, shut down after the module), which each worker would otherwise start again.
RAY_MODULE_DIRS = ("tests/distributed/", "tests/cluster/", "tests/tune/", "tests/porting/", "tests/integration/",
                   "tests/reliability/")


@pytest.hookimpl(tryfirst=True)  # before `-m 'not slow'` deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in MOVED_TO_SLOW:
            item.add_marker(pytest.mark.slow)
        if item.nodeid.startswith(RAY_MODULE_DIRS):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
