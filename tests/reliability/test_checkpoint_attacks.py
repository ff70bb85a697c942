"""A checkpoint edited by an attacker cannot create files, end or hang the loading process, or run the command line.

Real checkpoints (an algorithm's and a Policy's) are edited only in their JSON, the manifest's checksums recomputed
as an attacker would, to name relayrl.testing's FaultyEnv (whose env_config picks a file to create and a failure:
os._exit, an endless sleep, a raise) or anything in relayrl.__main__ (the command line) as the env, the evaluation
env, the callbacks, the config class, the algorithm class or a Policy's class. Each is loaded, trained and
evaluated (or `relayrl evaluate`d) in one subprocess with a timeout (load_tampered_checkpoints.py), so an os._exit
or a hang cannot take pytest down. Each must fail with a CheckpointError, create no file, leave the process
running and import no module outside relayrl's list of nameable classes (relayrl/checkpoints/nameable.py).
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from checkpoint_tampering import edit_json

from relayrl import PPOConfig
from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from relayrl.checkpoints.nameable import NAMEABLE
from relayrl.examples.envs.classes.random_env import RandomEnv

FAULTY_ENV = "relayrl.testing.faulty_envs:FaultyEnv"
CLI = "relayrl.__main__:main"
HERE = pathlib.Path(__file__).parent


def _faulty_env_config(marker: pathlib.Path, failure: str) -> dict:
    return {"marker": str(marker), "failure": failure, "fail_on_worker": None, "fail_at_step": 1}


def _options(edit):
    return lambda state: edit(state["config"]["options"])


def _no_ongoing_episodes(state):  # so that the stored runner state fits another env (FaultyEnv's)
    for key in ("episodes", "cached_to_module", "env"):
        state["sampling"].pop(key, None)
    state["sampling"]["ongoing"] = False


def _algorithm_edits(markers: pathlib.Path) -> dict:
    """name -> [(file, edit), ...] of the algorithm checkpoint."""
    def faulty_env(name, failure, by_reference=False):
        env = {"__import__": FAULTY_ENV} if by_reference else FAULTY_ENV
        config = _options(lambda o: o.update(env=env, env_config=_faulty_env_config(markers / name, failure)))
        return [("state.json", config), ("env_runner/state.json", _no_ongoing_episodes)]

    return {
        "faulty_env_exit": faulty_env("faulty_env_exit", "exit"),
        "faulty_env_hang": faulty_env("faulty_env_hang", "hang", by_reference=True),
        "faulty_env_raise": faulty_env("faulty_env_raise", "raise"),
        "faulty_evaluation_env": [("state.json", _options(lambda o: o.__setitem__("evaluation_config", {
            "env": FAULTY_ENV, "env_config": _faulty_env_config(markers / "faulty_evaluation_env", "exit")})))],
        "cli_as_env": [("state.json", _options(lambda o: o.__setitem__("env", {"__import__": CLI})))],
        "cli_as_callbacks": [("state.json", _options(lambda o: o.__setitem__("callbacks", {"__import__": CLI})))],
        "cli_as_config_class": [("state.json",
                                 lambda s: s["config"].__setitem__("class", "relayrl.__main__:PPOConfig"))],
        "cli_as_algorithm_class": [("manifest.json", lambda m: m.__setitem__("class", "relayrl.__main__:PPO"))],
    }


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """Build the checkpoints, tamper with copies, load them all in one subprocess: (results, tmp folder)."""
    tmp = tmp_path_factory.mktemp("attacks")
    markers = tmp / "markers"
    markers.mkdir()
    # The spaces of FaultyEnv (so that only JSON needs editing): an example env, which a checkpoint may name.
    spaces = {"observation_space": gym.spaces.Box(0.0, np.inf, (2,), np.float32),
              "action_space": gym.spaces.Discrete(2)}
    algo = (PPOConfig().environment(RandomEnv, env_config=spaces).env_runners(num_envs_per_env_runner=1)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).evaluation(evaluation_duration=1)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    algo.train()
    original = pathlib.Path(algo.save(str(tmp / "original")).checkpoint.path)
    algo.stop()
    policy_original = tmp / "policy_original"
    PPOTorchPolicy(spaces["observation_space"], spaces["action_space"],
                   {"model": {"fcnet_hiddens": [8]}}).export_checkpoint(str(policy_original))

    loads = []
    for name, edits in _algorithm_edits(markers).items():
        shutil.copytree(original, tmp / name)
        for file, edit in edits:
            edit_json(tmp / name, file, edit)
        loads.append({"name": name, "how": "algorithm", "path": str(tmp / name)})
    for name, reference in (("cli_as_policy_class", CLI), ("faulty_env_as_policy_class", FAULTY_ENV)):
        edit_json(shutil.copytree(policy_original, tmp / name), "state.json",
                  lambda s: s["policy_spec"]["fields"].__setitem__("policy_class", {"__import__": reference}))
        loads.append({"name": name, "how": "policy", "path": str(tmp / name)})
    for name in ("faulty_env_exit", "cli_as_env"):  # `relayrl evaluate CK` on two of them, in copies
        path = shutil.copytree(tmp / name, tmp / f"evaluate_{name}")
        if name == "faulty_env_exit":
            edit_json(path, "state.json", _options(lambda o: o.__setitem__(
                "env_config", _faulty_env_config(markers / "evaluate_faulty_env_exit", "exit"))))
        loads.append({"name": f"evaluate_{name}", "how": "cli", "path": str(path)})
    refused = shutil.copytree(original, tmp / "refused")  # warms up the refusal path too
    edit_json(refused, "state.json", _options(lambda o: o.__setitem__("env", "subprocess:Popen")))
    warm_up = [{"how": "algorithm", "path": str(original)}, {"how": "policy", "path": str(policy_original)},
               {"how": "cli", "path": str(original)}, {"how": "algorithm", "path": str(refused)}]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE)] + sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(HERE / "load_tampered_checkpoints.py"),
                           json.dumps({"warm_up": warm_up, "loads": loads})],
                          capture_output=True, text=True, timeout=180, env=env, cwd=tmp)
    assert done.returncode == 0, f"the loading process ended (status {done.returncode}):\n{done.stderr[-3000:]}"
    results = json.loads(done.stdout.strip().splitlines()[-1])
    return results, tmp


@pytest.mark.parametrize("name", sorted(_algorithm_edits(pathlib.Path("."))) + [
    "cli_as_policy_class", "faulty_env_as_policy_class"])
def test_a_tampered_checkpoint_is_refused_and_runs_nothing(probe, name):
    results, tmp = probe
    result = results[name]
    assert result["outcome"] == "CheckpointError", result
    expected = "relayrl.testing holds test helpers" if "faulty" in name else "relayrl.__main__"
    assert expected in result["message"]
    assert not list((tmp / "markers").iterdir()), "a file was created"
    assert set(result["new_modules"]) <= set(NAMEABLE), "a module outside relayrl's list was imported"


@pytest.mark.parametrize("name", ["evaluate_faulty_env_exit", "evaluate_cli_as_env"])
def test_relayrl_evaluate_gives_one_line_and_runs_once(probe, name):
    results, tmp = probe
    result = results[name]
    assert result["outcome"] == "exit" and result["code"] == 2, result
    lines = result["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("relayrl evaluate: error: ") and "Traceback" not in result["stderr"]
    assert result["stdout"].count("checkpoint: ") == 1, "the command line ran more than once"
    assert not list((tmp / "markers").iterdir())
    assert set(result["new_modules"]) <= set(NAMEABLE)
