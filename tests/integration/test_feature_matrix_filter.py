"""The feature matrix's `mean_std_filter` cells (feature_matrix.py): `observation_filter="MeanStdFilter"` trains,
and a checkpoint carries the filter's statistics into a fresh algorithm (the same numbers), or the option is refused
when the algorithm is built with an error that names the fix."""
import pytest

import feature_matrix as fm
from matrix_checks import refused

from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter

PAIRS = [(a, e) for a in fm.ALGORITHMS for e in fm.ENV_KINDS]


def filter_state(algo_obj) -> dict:
    """The state of the (one) MeanStdFilter in the local EnvRunner's env-to-module pipeline; PG (the Policy API):
    its local runner's filters, one per policy (relayrl/policy/rollout/observation_filters.py)."""
    if getattr(algo_obj, "_policy_based", False):
        return {"stats": sorted(algo_obj.env_runner.filter_states().items())}
    filters = algo_obj.env_runner._env_to_module[MeanStdFilter]
    assert len(filters) == 1, filters
    return filters[0].get_state()


def counts(state: dict) -> list:
    """The number of observations behind each running statistic (one per agent, multi-agent)."""
    if "stat" in state:
        return [state["stat"]["count"]]
    return [stat["count"] for _, stat in state.get("stats", [])]


@pytest.mark.parametrize("algo, env_kind", PAIRS)
def test_mean_std_filter(algo, env_kind, tmp_path):
    config = fm.make_config(algo, env_kind, mean_std_filter=True)
    if refused(algo, env_kind, "mean_std_filter", config.build_algo):
        return
    algo_obj = config.build_algo()
    try:
        algo_obj.train()
        trained = filter_state(algo_obj)
        assert counts(trained) and min(counts(trained)) > 1
        path = algo_obj.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo_obj.stop()
    fresh = config.build_algo()
    try:
        first_reset = 1 if algo == "PG" else 0  # the Policy runner filters its first observations when built
        assert max(counts(filter_state(fresh)), default=0) <= first_reset
        fresh.restore_from_path(path)
        assert filter_state(fresh) == trained  # the same counts, means and squared deviations
        fresh.train()
        assert min(counts(filter_state(fresh))) > min(counts(trained))
    finally:
        fresh.stop()
