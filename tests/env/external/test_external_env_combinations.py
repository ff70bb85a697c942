"""The external-env server meets other features.

- `on_sample_end` callbacks and `offline_data(output=...)` recording were silently skipped on the server (no
  callback call, no file; the simulator's own runner recorded instead, in its process). Now the server records
  what it receives, and the simulator records nothing.
- Evaluation on a local env named by its gymnasium id: the server's settings in env_config (`port`, ...) reached
  `gym.make("CartPole-v1", port=0)` (TypeError), and evaluation_config cannot remove a key (dicts are merged)."""
import glob
import os

import pytest
from external_env_helpers import running, server_config

from relayrl.callbacks import RLlibCallback
from relayrl.env.external import ExternalSimulator

pytest.importorskip("pyarrow")


class SampleEndCounter(RLlibCallback):
    calls = []  # (EnvRunner class name, env steps in the samples)

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples=None, **kwargs):
        SampleEndCounter.calls.append((type(env_runner).__name__, sum(len(e) for e in samples)))
        metrics_logger.log_value("custom_sampled", sum(len(e) for e in samples), reduce="sum")


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


def test_evaluation_on_a_gym_id_gets_no_server_settings(tmp_path):
    config = server_config(max_pending_env_steps=1000).evaluation(
        evaluation_interval=1, evaluation_duration=1,
        evaluation_config={"env_runner_cls": None, "env": "CartPole-v1", "env_config": {"render_mode": None}})
    eval_config = config.get_evaluation_config_object()
    assert eval_config.env_config == {"render_mode": None}  # the user's own eval keys stay
    algo = config.build_algo()
    try:
        with running(ExternalSimulator("CartPole-v1", port=algo.env_runner.port)):
            result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] == 1
        assert algo.env_runner.config.env_config["max_pending_env_steps"] == 1000  # training keeps them
    finally:
        algo.stop()


_SERVER_SCRIPT = """
from relayrl.callbacks import RLlibCallback


class ScriptCallbacks(RLlibCallback):
    pass
"""


def test_a_simulator_trusts_the_server_script_by_module_name(tmp_path, monkeypatch):
    """The server script's own classes reach the simulator as `__main__:Name`; `--trust server_script` (the CLI's
    trusted=["server_script"]) imports that script as a module and takes its class (it was refused before)."""
    (tmp_path / "server_script_62.py").write_text(_SERVER_SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    as_in_main = type("ScriptCallbacks", (RLlibCallback,), {"__module__": "__main__", "__qualname__": "ScriptCallbacks"})
    algo = server_config().callbacks(as_in_main).build_algo()
    try:
        with pytest.raises(ValueError, match="--trust MODULE"):
            ExternalSimulator("CartPole-v1", port=algo.env_runner.port)
        simulator = ExternalSimulator("CartPole-v1", port=algo.env_runner.port, trusted=["server_script_62"])
        with running(simulator):
            algo.train()
        assert simulator.runner.config.callbacks_class.__module__ == "server_script_62"
    finally:
        algo.stop()


def test_the_drivers_runner_beside_remote_runners_listens_on_no_port(make_server):
    """With num_env_runners=2 the actors (worker_index 1 and 2) serve simulators; the driver's runner (worker_index
    0) never samples, so it opens no port a simulator could connect to and wait on forever."""
    from relayrl.env.external.env_runner_server_for_external_inference import EnvRunnerServerForExternalInference

    config = server_config().env_runners(num_env_runners=2)
    driver = make_server(config=config)
    assert driver.port is None
    driver.assert_healthy()
    with pytest.raises(RuntimeError, match="does not listen for simulators: the 2 remote EnvRunners do"):
        driver.sample()
    actor = EnvRunnerServerForExternalInference(config=config, worker_index=1)
    try:
        assert isinstance(actor.port, int) and actor.port > 0
    finally:
        actor.stop()


def test_a_simulator_is_told_every_untrusted_name_of_the_servers_config_at_once():
    """The server script's callbacks and Learner classes reach the simulator as `__main__:Name`: one error names
    both (before, the simulator met them one at a time), with the fix for both."""
    from relayrl.algorithms.ppo.ppo_learner import PPOTorchLearner

    callbacks = type("ScriptCallbacks", (RLlibCallback,), {"__module__": "__main__", "__qualname__": "ScriptCallbacks"})
    learner = type("ScriptLearner", (PPOTorchLearner,), {"__module__": "__main__", "__qualname__": "ScriptLearner"})
    algo = server_config().callbacks(callbacks).learners(learner_class=learner).build_algo()
    try:
        with pytest.raises(ValueError, match=r"names 2 classes.*ExternalSimulator\(\.\.\., trusted=") as refused:
            ExternalSimulator("CartPole-v1", port=algo.env_runner.port)
        message = str(refused.value)
        assert "`__main__:ScriptCallbacks`" in message and "`__main__:ScriptLearner`" in message
        assert "trusted=[ScriptLearner, ScriptCallbacks]" in message
    finally:
        algo.stop()
