"""The external-env tests' fixture (their helpers: external_env_helpers.py)."""
import pytest
from external_env_helpers import server_config

from relayrl.env.external.env_runner_server_for_external_inference import EnvRunnerServerForExternalInference


@pytest.fixture
def make_server():
    """make(config=None, **env_config): EnvRunnerServerForExternalInference(config=config or
    server_config(**env_config)); all of them are stopped after the test."""
    servers = []

    def make(config=None, **env_config):
        servers.append(EnvRunnerServerForExternalInference(config=config or server_config(**env_config)))
        return servers[-1]

    yield make
    for server in servers:
        server.stop()
