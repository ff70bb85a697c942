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
