"""The feature matrix's offline rows (feature_matrix.py): BC (Discrete actions) and CQL (Box actions) train from a
small `record` of each env kind, evaluated in the env every iteration, or are refused when built."""
import math

import pytest

import feature_matrix as fm
from matrix_checks import refused

PAIRS = [(a, e) for a, e, _ in fm.offline_cells()]


@pytest.mark.parametrize("algo, env_kind", PAIRS)
def test_train_from_record(algo, env_kind, tmp_path):
    fm.record_for_offline(algo, env_kind, tmp_path / "recording")
    config = fm.make_offline_config(algo, env_kind, tmp_path / "recording")
    if refused(algo, env_kind, fm.OFFLINE_FEATURE, config.build_algo):
        return
    algo_obj = config.build_algo()
    try:
        algo_obj.train()
        result = algo_obj.train()
        assert result["training_iteration"] == 2
        assert result["evaluation"]["env_runners"]["num_env_steps_sampled"] > 0
        learned = result["learners"]["default_policy"]  # it updated from the recorded rows
        assert learned["num_module_steps_trained"] > 0 and math.isfinite(learned["total_loss"])
    finally:
        algo_obj.stop()
