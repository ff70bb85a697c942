"""The external-env server meets two features every other EnvRunner has: `on_sample_end` callbacks and
`offline_data(output=...)` recording. Both were silently skipped on the server (no callback call, no file); the
simulator's own runner recorded instead, in the simulator's process. Now the server records what it receives, and
the simulator records nothing."""
import contextlib
import glob
import os
import threading

import pytest
from external_env_helpers import server_config

from relayrl.callbacks import RLlibCallback
from relayrl.env.external import ExternalSimulator

pytest.importorskip("pyarrow")


class SampleEndCounter(RLlibCallback):
    calls = []  # (EnvRunner class name, env steps in the samples)

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples=None, **kwargs):
        SampleEndCounter.calls.append((type(env_runner).__name__, sum(len(e) for e in samples)))
        metrics_logger.log_value("custom_sampled", sum(len(e) for e in samples), reduce="sum")


@contextlib.contextmanager
def running(simulator):
    thread = threading.Thread(target=simulator.run, daemon=True)
    thread.start()
    try:
        yield simulator
    finally:
        simulator.stop()
        thread.join(5)
        simulator.close()


def test_the_server_records_and_calls_on_sample_end(tmp_path):
    SampleEndCounter.calls.clear()
    output = str(tmp_path / "recorded")
    algo = server_config().callbacks(SampleEndCounter).offline_data(output=output).build_algo()
    try:
        with running(ExternalSimulator("CartPole-v1", port=algo.env_runner.port, trusted=[SampleEndCounter])):
            for _ in range(2):
                result = algo.train()
    finally:
        algo.stop()  # (writes the remaining rows: output_write_remaining_data)
    server_calls = [steps for name, steps in SampleEndCounter.calls if name == "EnvRunnerServerForExternalInference"]
    assert len(server_calls) >= 2 and sum(server_calls) == result["num_env_steps_sampled_lifetime"] == 256
    assert result["env_runners"]["custom_sampled"] > 0  # the server's metrics_logger reaches the results
    files = glob.glob(os.path.join(output, "**", "*.parquet"), recursive=True)
    assert files and all(os.sep + "external_env" + os.sep in f for f in files)  # the server's, once
    import pyarrow.parquet as pq

    rows = sum(pq.read_table(f).num_rows for f in files)
    assert rows > 0
