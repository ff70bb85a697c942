"""A script's own env and callbacks classes (its `__main__`) in a Tune run: Tune's trial actors get them by value
(cloudpickle), where they are not importable by name. Their checkpoints must still name them (`__main__:MyEnv`), so
that `Algorithm.from_checkpoint(best.checkpoint.path, trusted=[MyEnv, ...])` loads them, as docs/tune.md says."""
import os
import subprocess
import sys
import textwrap
import types

import pytest

from relayrl import Algorithm, PPOConfig
from relayrl.callbacks import RLlibCallback
from relayrl.checkpoints import by_name
from relayrl.checkpoints.errors import CheckpointError
from relayrl.testing.envs import CountingEnv


def _shipped_by_value(name, base):
    """A class as a trial actor sees a script's class: `__module__` is `__main__`, but this `__main__` lacks it."""
    return type(name, (base,), {"__module__": "__main__", "__qualname__": name})


def test_a_script_class_run_elsewhere_is_stored_by_name():
    env_cls = _shipped_by_value("ScriptEnvNotInThisMain", CountingEnv)
    assert by_name.describe(env_cls) == {by_name.IMPORT: "__main__:ScriptEnvNotInThisMain"}
    assert by_name.describe(lambda: 0)[by_name.UNSTORABLE]  # lambdas stay unstorable


def test_a_checkpoint_written_where_the_script_class_came_by_value_loads_with_trusted(tmp_path):
    env_cls = _shipped_by_value("ScriptEnvNotInThisMain", CountingEnv)
    callbacks_cls = _shipped_by_value("ScriptCallbacksNotInThisMain", RLlibCallback)
    config = (PPOConfig().environment(env_cls, env_config={"episode_len": 5}).callbacks(callbacks_cls)
              .training(train_batch_size=20, minibatch_size=10, num_epochs=1)
              .rl_module(model_config={"fcnet_hiddens": [4]}).debugging(seed=0))
    algo = config.build_algo()
    algo.train()
    path = algo.save_to_path(str(tmp_path / "checkpoint"))
    algo.stop()
    # Both names in one refusal (not one at a time), with the fix for both.
    with pytest.raises(CheckpointError, match=r"ScriptEnvNotInThisMain`.*ScriptCallbacksNotInThisMain`.*"
                                              r"trusted=\[ScriptEnvNotInThisMain, ScriptCallbacksNotInThisMain\]"
                       ) as refusal:
        Algorithm.from_checkpoint(path)
    assert "trusted=['__main__']" not in str(refusal.value)  # ('__main__' is the loading script, not the saving one)
    restored = Algorithm.from_checkpoint(path, trusted=[env_cls, callbacks_cls])
    try:
        assert restored.config.env is env_cls and restored.config.callbacks_class is callbacks_cls
        assert restored.iteration == 1
        restored.train()
    finally:
        restored.stop()


def test_the_script_module_itself_may_be_trusted(tmp_path):
    """`import train; from_checkpoint(path, trusted=[train])`: a module object counts as its name, and its classes
    stand for the `__main__:Name` the script saved (a module in trusted= was silently ignored before)."""
    config = (PPOConfig().environment(_shipped_by_value("ScriptEnvNotInThisMain", CountingEnv),
                                      env_config={"episode_len": 5})
              .training(train_batch_size=20, minibatch_size=10, num_epochs=1)
              .rl_module(model_config={"fcnet_hiddens": [4]}).debugging(seed=0))
    algo = config.build_algo()
    path = algo.save_to_path(str(tmp_path / "checkpoint"))
    algo.stop()
    train = types.ModuleType("train")  # the saving script, imported by the loading one
    train.ScriptEnvNotInThisMain = type("ScriptEnvNotInThisMain", (CountingEnv,), {"__module__": "train"})
    restored = Algorithm.from_checkpoint(path, trusted=[train])
    try:
        assert restored.config.env is train.ScriptEnvNotInThisMain
    finally:
        restored.stop()


_SCRIPT = """
import gymnasium as gym
import numpy as np


class ScriptEnv(gym.Env):
    def __init__(self, config=None):
        self.size = (config or {{}}).get("size", 4)
        self.observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return np.zeros(1, np.float32), {{}}

    def step(self, action):
        self.t += 1
        return np.full(1, self.t / self.size, np.float32), float(action), self.t >= self.size, False, {{}}


if __name__ == "__main__":
    import ray
    from ray import tune
    from relayrl import PPO, PPOConfig

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    config = (PPOConfig().environment(ScriptEnv, env_config={{"size": tune.grid_search([3, 5])}})
              .training(train_batch_size=30, minibatch_size=15, num_epochs=1)
              .rl_module(model_config={{"fcnet_hiddens": [4]}}).debugging(seed=0))
    results = tune.Tuner(PPO, param_space=config, run_config=tune.RunConfig(
        storage_path={storage!r}, name="script", stop={{"training_iteration": 2}}, verbose=0,
        checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True))).fit()
    assert not results.errors, results.errors
    best = results.get_best_result(metric="env_runners/episode_return_mean", mode="max")
    print("BEST", best.checkpoint.path)
"""

_LOADER = """
import sys
sys.path.insert(0, {folder!r})
from relayrl import Algorithm
from driver import ScriptEnv

algo = Algorithm.from_checkpoint(sys.argv[1], trusted=[ScriptEnv])
assert algo.config.env is ScriptEnv and algo.config.env_config["size"] == 5, algo.config.env_config
print("LOADED", algo.iteration, algo.train()["training_iteration"])
algo.stop()
"""


@pytest.mark.slow
def test_best_checkpoint_of_a_tune_run_on_a_script_env_loads_in_a_new_process(tmp_path):
    pytest.importorskip("ray.tune")
    (tmp_path / "driver.py").write_text(textwrap.dedent(_SCRIPT.format(storage=str(tmp_path / "results"))))
    (tmp_path / "loader.py").write_text(textwrap.dedent(_LOADER.format(folder=str(tmp_path))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run([sys.executable, "driver.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    checkpoint = [line.split(" ", 1)[1] for line in run.stdout.splitlines() if line.startswith("BEST ")][0]
    load = subprocess.run([sys.executable, "loader.py", checkpoint], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert load.returncode == 0, load.stderr[-3000:]
    assert "LOADED 2 3" in load.stdout


def test_relayrl_evaluate_trusts_the_saving_script_by_module_name(tmp_path, monkeypatch, capsys):
    """`relayrl evaluate CHECKPOINT --trust train` for a checkpoint naming `__main__:ScriptEnv` (a Tune run's
    train.py): it resolves to train.ScriptEnv (the command line could not trust a `__main__` class before)."""
    from relayrl.cli import main

    (tmp_path / "train_62.py").write_text("from relayrl.testing.envs import CountingEnv\n\n\n"
                                          "class ScriptEnv(CountingEnv):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = (PPOConfig().environment(_shipped_by_value("ScriptEnv", CountingEnv), env_config={"episode_len": 5})
              .training(train_batch_size=20, minibatch_size=10, num_epochs=1)
              .rl_module(model_config={"fcnet_hiddens": [4]}).debugging(seed=0))
    algo = config.build_algo()
    path = algo.save_to_path(str(tmp_path / "checkpoint"))
    algo.stop()
    assert main(["evaluate", path, "--episodes", "1"]) != 0
    assert "--trust that script's module name" in capsys.readouterr().err
    assert main(["evaluate", path, "--episodes", "1", "--trust", "train_62"]) == 0
    assert "mean return over 1 episodes: 15.00" in capsys.readouterr().out
