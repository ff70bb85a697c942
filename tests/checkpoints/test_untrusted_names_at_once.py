"""A checkpoint whose config names a script's env class, mapping function and learner connector class, loaded in a
new process without `trusted=`: ONE CheckpointError names all three (each where the checkpoint names it, with
their modules and the fix for all), nothing is imported to find them, and `trusted=[that module]` then loads."""
import json
import os
import subprocess
import sys

import pytest

from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.trust import Trust
from relayrl.checkpoints.untrusted_names import NameCheck

# The user's definitions: a multi-agent env, a policy mapping function and a learner connector piece (a class:
# learner_connector is called with the spaces, as a ConnectorV2's constructor is).
_DEFINITIONS = '''
import gymnasium as gym
import numpy as np

from relayrl import MultiAgentEnv
from relayrl.connectors import ConnectorV2


class TwoWalkers(MultiAgentEnv):
    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = ["a0", "a1"]
        self.observation_spaces = {a: gym.spaces.Box(-10, 10, (2,), np.float32) for a in self.agents}
        self.action_spaces = {a: gym.spaces.Discrete(2) for a in self.agents}

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {a: np.zeros(2, np.float32) for a in self.agents}, {}

    def step(self, actions):
        self.t += 1
        obs = {a: np.array([self.t, 0], np.float32) for a in actions}
        return obs, {a: float(actions[a]) for a in actions}, {"__all__": self.t >= 4}, {"__all__": False}, {}


def map_agent(agent_id, episode=None, **kwargs):
    return "p0" if agent_id == "a0" else "p1"


class PassOn(ConnectorV2):
    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        return batch
'''

_SAVE = '''
import sys

from relayrl import PPOConfig


def make_config():
    return (PPOConfig().environment(TwoWalkers)
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=map_agent)
            .env_runners(num_envs_per_env_runner=1, rollout_fragment_length=8)
            .training(learner_connector=PassOn, train_batch_size=16, minibatch_size=8, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [4]}).debugging(seed=0, logger_config={"type": "none"}))


if __name__ == "__main__":
    algo = make_config().build_algo()
    algo.train()
    algo.save_to_path(sys.argv[1])
    algo.stop()
'''

# The new process: without trusted= (the refusal; is any user module imported?), then with trusted=[module].
_LOAD = '''
import json, sys
from relayrl import Algorithm
from relayrl.checkpoints import CheckpointError

path, module = sys.argv[1], sys.argv[2]
try:
    Algorithm.from_checkpoint(path)
    out = {"refusal": None}
except CheckpointError as error:
    out = {"refusal": str(error), "kind": type(error).__name__,
           "imported": sorted(m for m in ("my_walkers", "user_script") if m in sys.modules)}
algo = Algorithm.from_checkpoint(path, trusted=[module])
out.update(iteration=algo.iteration, env=algo.config.env.__name__, mapping=algo.config.policy_mapping_fn("a1"),
           connector=algo.config.learner_connector.__name__)
algo.train()
algo.stop()
print("OUT", json.dumps(out))
'''


def _write(tmp_path, where):
    """The saving script; `where`: the definitions in the script itself (`__main__`) or in a module it imports."""
    if where == "script":
        (tmp_path / "user_script.py").write_text(_DEFINITIONS + _SAVE)
        return "user_script", "__main__"
    (tmp_path / "my_walkers.py").write_text(_DEFINITIONS)
    (tmp_path / "user_script.py").write_text("from my_walkers import TwoWalkers, map_agent, PassOn\n" + _SAVE)
    return "my_walkers", "my_walkers"


def _run(tmp_path, *args, timeout=180):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path)] + sys.path), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module", params=["script", "module"])
def saved(request, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp(request.param)
    trusted, module = _write(tmp_path, request.param)
    run = _run(tmp_path, "user_script.py", str(tmp_path / "checkpoint"))
    assert run.returncode == 0, run.stderr[-3000:]
    return tmp_path, trusted, module


def test_one_error_names_the_three_and_trusting_their_module_loads(saved):
    tmp_path, trusted, module = saved
    (tmp_path / "load.py").write_text(_LOAD)
    run = _run(tmp_path, "load.py", str(tmp_path / "checkpoint"), trusted)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads([line for line in run.stdout.splitlines() if line.startswith("OUT ")][-1][4:])
    refusal = out["refusal"]
    assert out["kind"] == "UntrustedNames" and "\n" not in refusal
    assert "names 3 classes, functions or modules" in refusal
    for name, option in [("TwoWalkers", "env"), ("map_agent", "policy_mapping_fn"),
                         ("PassOn", "learner_connector")]:
        assert f"`{module}:{name}` (state.json, `config.options.{option}`)" in refusal
    assert out["imported"] == []  # nothing was imported to find them (the module is importable here)
    if module == "__main__":  # the saving script's module name, or its objects
        assert "trusted=['train']) with 'train' standing for the module name of the script" in refusal
        objects = refusal.split("pass the objects imported from that script: trusted=[")[1].split("]")[0]
        assert sorted(objects.split(", ")) == ["PassOn", "TwoWalkers", "map_agent"]
    else:
        assert f"trusted=['{module}'])" in refusal
    # trusted=[that module] loads all three, and the restored algorithm trains on.
    assert out["iteration"] == 1 and out["env"] == "TwoWalkers" and out["mapping"] == "p1"
    assert out["connector"] == "PassOn"


def test_relayrl_evaluate_prints_the_one_error_on_one_line(saved):
    tmp_path, trusted, module = saved
    run = _run(tmp_path, "-m", "relayrl", "evaluate", str(tmp_path / "checkpoint"), "--episodes", "1")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    for name in ("TwoWalkers", "map_agent", "PassOn"):
        assert f"`{module}:{name}`" in lines[0]
    if module == "__main__":
        assert "--trust that script's module name for its `__main__` (train.py saved it: --trust train)" in lines[0]
    else:
        assert f"From the command line: --trust {module} (importable here" in lines[0]


def test_restore_from_path_into_the_users_own_algorithm_looks_up_no_names(saved):
    """The script builds the algorithm with its own config: the checkpoint's names are not looked up at all."""
    tmp_path, trusted, _ = saved
    code = ("import sys, user_script\nalgo = user_script.make_config().build_algo()\n"
            "algo.restore_from_path(sys.argv[1])\nprint('ITERATION', algo.iteration)\nalgo.stop()\n")
    run = _run(tmp_path, "-c", code, str(tmp_path / "checkpoint"))
    assert run.returncode == 0 and "ITERATION 1" in run.stdout, run.stderr[-3000:]


def test_a_name_refused_for_another_reason_keeps_its_own_error():
    """The check collects only names that are neither relayrl's nor trusted: a relayrl class of the wrong kind,
    relayrl.__main__ and a corrupt name are left to the lookup, which says why each is refused."""
    check, trust = NameCheck(), Trust().for_kinds(("env",))
    for name in ("relayrl.algorithms.ppo.ppo:PPO", "relayrl.__main__:main", "not a name", "my_envs:MyEnv",
                 "relayrl.examples.envs.classes.simple_corridor:SimpleCorridor"):
        check.name(name, trust, f"`{name}`")
    with pytest.raises(CheckpointError, match=r"`my_envs:MyEnv`: it is not on relayrl's list") as one:
        check.raise_if_any("ckpt")
    assert "PPO" not in str(one.value) and "relayrl.__main__" not in str(one.value)
    with pytest.raises(CheckpointError, match="a relayrl algorithm class; here a checkpoint may name env classes"):
        trust.resolve("relayrl.algorithms.ppo.ppo:PPO", what="env")


def test_the_check_and_the_lookup_refuse_the_same_names(monkeypatch):
    """`Trust.refuses` (the check) and `Trust.resolve` (the load) go by the same rules."""
    import types

    script = types.ModuleType("script_65")
    script.MyEnv = type("MyEnv", (), {"__module__": "script_65"})
    monkeypatch.setitem(sys.modules, "script_65", script)
    cases = [(Trust(), "script_65:MyEnv"), (Trust(trusted=["script_65"]), "script_65:MyEnv"),
             (Trust(trusted=[script.MyEnv]), "__main__:MyEnv"), (Trust(), "__main__:MyEnv"),
             (Trust(trusted=[script]), "__main__:MyEnv"), (Trust(), "os:system"),
             (Trust(), "relayrl.testing.envs:FaultyEnv")]
    for trust, name in cases:
        try:
            trust.resolve(name, what="x")
            resolved = True
        except CheckpointError:
            resolved = False
        assert trust.refuses(name) == (not resolved), (name, trust._modules)
