"""Loading a checkpoint runs no code from it: names in it resolve only to relayrl's list of nameable classes
(checkpoints/nameable.py), registered envs, and what the caller passes (trusted=, the class it loads with)."""
import json
import pathlib
import sys

import pytest
from checkpoint_tampering import edit_json, rehash

from relayrl import Algorithm, PPOConfig, RLlibCallback, register_env
from relayrl.checkpoints import CheckpointError
from relayrl.modules.rl_module import RLModule


class CountingCallbacks(RLlibCallback):  # a user's class: resolves only when passed (trusted=)
    def on_train_result(self, *, result, **kwargs):
        result["custom_flag"] = 1


def make_cartpole(env_config):
    import gymnasium as gym

    return gym.make("CartPole-v1")


def make_registered_cartpole(env_config):  # (a registered creator is nameable: kept apart from make_cartpole)
    return make_cartpole(env_config)


def _config(**training):
    return (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1, **training)
            .debugging(seed=1, logger_config={"type": "none"}))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    algo = _config().callbacks(CountingCallbacks).build_algo()
    algo.train()
    path = algo.save(str(tmp_path_factory.mktemp("ckpt") / "ppo")).checkpoint.path
    algo.stop()
    return pathlib.Path(path)


def _copy(saved, tmp_path) -> pathlib.Path:
    import shutil

    return pathlib.Path(shutil.copytree(saved, tmp_path / "ckpt"))


def _set_option(root, key, value):
    edit_json(root, "state.json", lambda data: data["config"]["options"].__setitem__(key, value))


def test_untampered_checkpoint_loads_with_the_users_callbacks_class_when_passed(saved):
    with pytest.raises(CheckpointError, match=r"CountingCallbacks`.*trusted=\[CountingCallbacks\]"):
        Algorithm.from_checkpoint(saved)
    algo = Algorithm.from_checkpoint(saved, trusted=[CountingCallbacks])
    try:
        assert algo.train()["custom_flag"] == 1
    finally:
        algo.stop()


def test_popen_as_env_runs_nothing(saved, tmp_path):
    """The probe: env="subprocess:Popen" with env_config keys as argv, checksums recomputed."""
    marker = tmp_path / "pwned"
    root = _copy(saved, tmp_path)
    _set_option(root, "env", "subprocess:Popen")
    _set_option(root, "env_config", {"/bin/sh": 1, "-c": 1, f"touch {marker}": 1})
    with pytest.raises(CheckpointError, match=r"`subprocess:Popen`: it is not on relayrl's list"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])
    assert not marker.exists()


@pytest.mark.parametrize("reference", ["subprocess:Popen", "os:system", "builtins:eval"])
def test_code_named_by_reference_is_refused(saved, tmp_path, reference):
    root = _copy(saved, tmp_path)
    _set_option(root, "callbacks", {"__import__": reference})
    with pytest.raises(CheckpointError, match=rf"callbacks` names `{reference}`"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])


def test_a_module_not_yet_imported_is_never_imported(saved, tmp_path):
    assert "antigravity" not in sys.modules  # importing it would open a web browser
    root = _copy(saved, tmp_path)
    _set_option(root, "env", {"__import__": "antigravity:fly"})
    with pytest.raises(CheckpointError, match="not on relayrl's list"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])
    assert "antigravity" not in sys.modules


def test_forged_class_in_the_manifest_is_refused(saved, tmp_path):
    root = _copy(saved, tmp_path)
    edit_json(root, "manifest.json", lambda m: m.__setitem__("class", "subprocess:Popen"))
    with pytest.raises(CheckpointError, match="manifest.json"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])


def test_string_paths_inside_options_resolve_through_the_trust(saved, tmp_path):
    root = _copy(saved, tmp_path)
    _set_option(root, "exploration_config", {"type": "subprocess:Popen"})
    with pytest.raises(CheckpointError, match="exploration_config"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])


def test_unregistered_env_is_named_and_can_be_passed(saved, tmp_path):
    root = _copy(saved, tmp_path)
    _set_option(root, "env", "my-unregistered-env")
    with pytest.raises(CheckpointError, match=r"env 'my-unregistered-env' is not registered.*env=\.\.\."):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])
    algo = Algorithm.from_checkpoint(root, env="CartPole-v1", trusted=[CountingCallbacks])
    try:
        assert algo.config.env == "CartPole-v1"
        algo.train()
    finally:
        algo.stop()
    register_env("my-unregistered-env", make_registered_cartpole)
    Algorithm.from_checkpoint(root, trusted=[CountingCallbacks]).stop()


_ENV_MODULE = """
import gymnasium as gym, pathlib
pathlib.Path({marker!r}).write_text("imported")  # (a module's import is code: it ran)
gym.register("Tampered46-v0", entry_point="gymnasium.envs.classic_control:CartPoleEnv", max_episode_steps=50)
"""


def test_a_module_env_string_imports_only_modules_the_trust_model_allows(saved, tmp_path, monkeypatch):
    """gymnasium's "module:EnvId" form imports the module (which registers EnvId): from a checkpoint, only a
    module this process imported already, one on relayrl's ENV_MODULES list (ale_py) or one passed in trusted=."""
    import gymnasium as gym

    marker, module = tmp_path / "imported", "env_module_46"
    (tmp_path / f"{module}.py").write_text(_ENV_MODULE.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    root = _copy(saved, tmp_path)
    _set_option(root, "env", f"{module}:Tampered46-v0")
    with pytest.raises(CheckpointError, match=rf"env module `{module}`.*trusted=\['{module}'\]"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])
    assert not marker.exists() and module not in sys.modules
    try:
        algo = Algorithm.from_checkpoint(root, trusted=[CountingCallbacks, module])  # the caller trusts it
        try:
            assert marker.exists() and algo.config.env == f"{module}:Tampered46-v0"
            assert algo.env_runner.env.envs[0].spec.id == "Tampered46-v0"
        finally:
            algo.stop()
    finally:
        sys.modules.pop(module, None)
        gym.registry.pop("Tampered46-v0", None)


def test_a_checkpoint_may_name_ale_py_for_its_env():
    from relayrl.checkpoints.trust import Trust

    pytest.importorskip("ale_py")
    assert Trust().import_env_module("ale_py", what="env").__name__ == "ale_py"  # (on relayrl's ENV_MODULES)
    assert "antigravity" not in sys.modules  # importing it would open a web browser
    with pytest.raises(CheckpointError, match="env module `antigravity`"):
        Trust().import_env_module("antigravity", what="env")
    assert "antigravity" not in sys.modules


def test_a_function_resolves_only_when_trusted(tmp_path):
    config = _config().environment(make_cartpole)
    algo = config.build_algo()
    path = algo.save(str(tmp_path / "fn")).checkpoint.path
    algo.stop()
    with pytest.raises(CheckpointError, match=r"make_cartpole`.*trusted=\[make_cartpole\]"):
        Algorithm.from_checkpoint(path)
    for trusted in ([make_cartpole], [__name__]):
        Algorithm.from_checkpoint(path, trusted=trusted).stop()


def test_an_option_given_again_is_not_looked_up(tmp_path):
    """What the refusal suggests works: a value given in config_overrides (or env=) replaces the stored name,
    which is then never resolved."""
    algo = _config().environment(make_cartpole).build_algo()
    path = algo.save(str(tmp_path / "fn")).checkpoint.path
    algo.stop()
    for kwargs in ({"config_overrides": {"env": make_cartpole}}, {"env": make_cartpole}):
        restored = Algorithm.from_checkpoint(path, **kwargs)
        try:
            assert restored.config.env is make_cartpole
        finally:
            restored.stop()


def test_module_checkpoint_constructor_arguments_are_data(tmp_path):
    import gymnasium as gym
    import numpy as np

    from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule

    module = DefaultPPOTorchRLModule(observation_space=gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
                                     action_space=gym.spaces.Discrete(2), model_config={"fcnet_hiddens": [8]})
    root = pathlib.Path(module.save_to_path(tmp_path / "module"))
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["metadata"]["__ctor__"]["kwargs"]["model_config"] = {"__import__": "os:system"}
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="os:system"):
        RLModule.from_checkpoint(root)


def test_symlink_leaving_the_checkpoint_is_refused(saved, tmp_path):
    root = _copy(saved, tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_text((root / "state.json").read_text())
    (root / "state.json").unlink()
    (root / "state.json").symlink_to(outside)
    rehash(root, "state.json")
    with pytest.raises(CheckpointError, match="outside the checkpoint"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])
    algo = _config().build_algo()
    try:
        with pytest.raises(CheckpointError, match="outside the checkpoint"):
            algo.restore_from_path(root)
    finally:
        algo.stop()


def test_symlinked_folder_leaving_the_checkpoint_is_refused(saved, tmp_path):
    import shutil

    root = _copy(saved, tmp_path)
    shutil.move(root / "learner_group", tmp_path / "elsewhere")
    (root / "learner_group").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CheckpointError, match="outside the checkpoint"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])


@pytest.mark.parametrize("content", ["[" * 100000 + "]" * 100000, "{not json", '"a string"'])
def test_malformed_json_gives_a_checkpoint_error(saved, tmp_path, content):
    root = _copy(saved, tmp_path)
    (root / "state.json").write_text(content)
    rehash(root, "state.json")
    with pytest.raises(CheckpointError, match="state.json"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])


@pytest.mark.parametrize("edit", [
    lambda m: m.__setitem__("components", {"learner_group": "x"}),
    lambda m: m.__setitem__("files", {"state.json": "x"}),
    lambda m: m["files"].__setitem__("../../etc/passwd", {"sha256": "0", "size": 1}),
])
def test_malformed_manifest_gives_a_checkpoint_error(saved, tmp_path, edit):
    root = _copy(saved, tmp_path)
    edit_json(root, "manifest.json", edit)
    with pytest.raises(CheckpointError, match="manifest.json"):
        Algorithm.from_checkpoint(root, trusted=[CountingCallbacks])


def test_a_class_a_script_saved_resolves_when_passed_from_that_script_imported():
    # A checkpoint saved by `python train.py` names `__main__:MyEnv`; the restoring script imports MyEnv from
    # train.py and passes it, as the refusal's message says (trusted=[MyEnv]): that is the class meant.
    from relayrl.checkpoints.trust import Trust

    assert Trust(trusted=[CountingCallbacks]).resolve("__main__:CountingCallbacks", what="x") is CountingCallbacks
    with pytest.raises(CheckpointError, match="`__main__` is the script"):
        Trust(also=[CountingCallbacks]).resolve("__main__:CountingCallbacks", what="x")  # only what the caller named
    with pytest.raises(CheckpointError, match="`__main__` is the script"):
        Trust(trusted=[CountingCallbacks]).resolve("__main__:OtherClass", what="x")
    # `MyAlgo.from_checkpoint(path)`: the class it is called on is named by the caller too.
    assert Trust(called_on=CountingCallbacks).resolve("__main__:CountingCallbacks", what="x") is CountingCallbacks
