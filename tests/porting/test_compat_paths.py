"""RLlib's module paths with `ray.rllib` replaced by `relayrl`: every path of the one table (relayrl/compat_paths.py)
imports and names the very objects of the relayrl module it points to; the generated stubs are current."""
import importlib
import os
import subprocess
import sys

import pytest

import relayrl
from relayrl import compat_paths
from relayrl.algorithms.registry import ALGORITHMS
from relayrl.compat_paths import RLLIB_PATHS, names_of, stub_modules, stub_path, stub_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))

# The paths issue 26 names (RLlib 2.60's paths of the names relayrl has), with one name each must hold.
ISSUE_PATHS = {
    "relayrl.algorithms.ppo": "PPOConfig", "relayrl.algorithms.dqn": "DQNConfig", "relayrl.algorithms.sac": "SACConfig",
    "relayrl.algorithms.algorithm_config": "AlgorithmConfig", "relayrl.core.columns": "Columns",
    "relayrl.core.rl_module.rl_module": "RLModule", "relayrl.core.rl_module.default_model_config": "DefaultModelConfig",
    "relayrl.core.rl_module.multi_rl_module": "MultiRLModule", "relayrl.core.learner.learner": "Learner",
    "relayrl.connectors.env_to_module": "FrameStackingEnvToModule", "relayrl.connectors.learner": "FrameStackingLearner",
    "relayrl.callbacks.callbacks": "RLlibCallback", "relayrl.env.single_agent_episode": "SingleAgentEpisode",
    "relayrl.env.env_runner": "EnvRunner", "relayrl.utils.metrics": "ENV_RUNNER_RESULTS",
    "relayrl.utils.framework": "try_import_torch", "relayrl.core": "DEFAULT_MODULE_ID",
    "relayrl.examples.utils": "add_rllib_example_script_args", "relayrl.utils.test_utils":
        "run_rllib_example_script_experiment", "relayrl.examples.envs.classes": "StatelessCartPole",
}
# Issue 22's multi-agent paths (RLlib's multi-agent example envs, episode, runner and replay buffers).
MULTI_AGENT_PATHS = {
    "relayrl.examples.envs.classes.multi_agent": ["MultiAgentCartPole", "MultiAgentPendulum",
                                                  "MultiAgentStatelessCartPole", "MultiAgentMountainCar"],
    "relayrl.env.multi_agent_env": ["MultiAgentEnv", "make_multi_agent"],
    "relayrl.env.multi_agent_episode": ["MultiAgentEpisode"],
    "relayrl.env.multi_agent_env_runner": ["MultiAgentEnvRunner"],
    "relayrl.utils.replay_buffers": ["MultiAgentEpisodeReplayBuffer", "MultiAgentPrioritizedEpisodeReplayBuffer",
                                     "EpisodeReplayBuffer", "PrioritizedEpisodeReplayBuffer"],
    "relayrl.utils.replay_buffers.multi_agent_episode_buffer": ["MultiAgentEpisodeReplayBuffer"],
    "relayrl.utils.replay_buffers.multi_agent_prioritized_episode_buffer": [
        "MultiAgentPrioritizedEpisodeReplayBuffer"],
}


@pytest.mark.parametrize("path", sorted(RLLIB_PATHS))
def test_every_path_names_the_same_objects(path):
    module = importlib.import_module(path)
    names = names_of(path)
    for name, source in names.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), (path, name)
    if path in compat_paths.OWN_MODULES:
        return  # relayrl's own module: it defines the names itself
    assert set(names) <= set(module.__all__) and set(names) <= set(dir(module))
    with pytest.raises(AttributeError, match=f"'{path}' has no attribute 'NoSuchName'"):
        getattr(module, "NoSuchName")


def test_star_import_gives_the_listed_names():
    namespace = {}
    exec("from relayrl.connectors.env_to_module import *", namespace)
    assert namespace["MeanStdFilter"] is relayrl.connectors.MeanStdFilter  # noqa: the package's own table
    assert {"FrameStackingEnvToModule", "FlattenObservations", "NumpyToTensor"} <= set(namespace)


@pytest.mark.parametrize("path, name", sorted(ISSUE_PATHS.items()))
def test_the_issues_paths_are_there(path, name):
    assert getattr(importlib.import_module(path), name) is not None


@pytest.mark.parametrize("path", sorted(MULTI_AGENT_PATHS))
def test_the_multi_agent_paths_are_there(path):
    module = importlib.import_module(path)
    for name in MULTI_AGENT_PATHS[path]:
        assert getattr(module, name) is not None, (path, name)


def test_rllibs_multi_agent_cartpole_is_two_cartpoles_by_agent_id():
    from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole, MultiAgentPendulum

    env = MultiAgentCartPole({"num_agents": 2})
    observations, _ = env.reset(seed=0)
    assert set(observations) == {0, 1} and env.get_observation_space(1).shape == (4,)
    _, rewards, terminateds, _, _ = env.step({0: 0, 1: 1})
    assert rewards == {0: 1.0, 1: 1.0} and terminateds["__all__"] is False
    assert MultiAgentPendulum({"num_agents": 3}).get_action_space(2).shape == (1,)


def test_the_algorithm_packages_mirror_rllibs():
    for entry in ALGORITHMS.values():
        package = importlib.import_module(entry.package)
        assert getattr(package, entry.name + "Config") is getattr(relayrl, entry.name + "Config")
        assert getattr(package, entry.name) is getattr(relayrl, entry.name)


def test_the_same_name_under_two_paths_is_one_object():
    from relayrl.connectors.env_to_module import MeanStdFilter as a
    from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter as b
    from relayrl.core.rl_module.rl_module import RLModule, RLModuleSpec
    from relayrl.callbacks.callbacks import RLlibCallback
    from relayrl.agents.callbacks import DefaultCallbacks

    assert a is b
    assert (RLModule, RLModuleSpec, RLlibCallback, DefaultCallbacks) == (
        relayrl.RLModule, relayrl.RLModuleSpec, relayrl.RLlibCallback, relayrl.DefaultCallbacks)


@pytest.mark.parametrize("path", stub_modules())
def test_generated_stubs_are_current(path):
    """`python -c "from relayrl.compat_paths import main; main()"` rewrites them after a table change."""
    with open(stub_path(path, ROOT)) as f:
        assert f.read() == stub_text(path), f"{path}: run compat_paths.main() to regenerate the stubs"


def test_own_modules_hook_the_table_or_define_the_names():
    for path in compat_paths.OWN_MODULES:
        module = importlib.import_module(path)
        for name in names_of(path):
            assert hasattr(module, name), (path, name)


def test_a_stub_imports_no_torch_until_a_name_is_used():
    code = ("import sys; import relayrl.core.rl_module.rl_module as m, relayrl.utils.metrics, relayrl.examples.utils;"
            "print('torch' in sys.modules, 'ray' in sys.modules); m.RLModule; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.stdout.split() == ["False", "False", "True"], out.stderr[-2000:]
