"""docs/porting.md's claim: every public name of RLlib's paths is importable from `relayrl` too (the same object),
except the names two paths hold as different objects, which docs/porting.md lists; and RLlib's
`from ray.rllib.env import MultiAgentEnv` ports by changing the import."""
import importlib
import os
import re

import pytest

import relayrl
from relayrl.compat_paths import RLLIB_PATHS, names_of, top_level_sources

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))
ALL_NAMES = sorted({name for path in RLLIB_PATHS for name in names_of(path)})
# DESIGN.md's public API contract: importable from the top-level package.
CONTRACT = ["Algorithm", "AlgorithmConfig", "PPO", "PPOConfig", "DQN", "DQNConfig", "SAC", "SACConfig", "IMPALA",
            "IMPALAConfig", "APPO", "APPOConfig", "SingleAgentEpisode", "MultiAgentEpisode", "MultiAgentEnv",
            "ConnectorV2", "ConnectorPipelineV2", "Columns", "RLModule", "RLModuleSpec", "MultiRLModule",
            "MultiRLModuleSpec", "DefaultModelConfig", "Learner", "LearnerGroup", "EnvRunner", "EnvRunnerGroup",
            "RLlibCallback", "DefaultCallbacks", "make_multi_callbacks", "MetricsLogger", "Policy", "PolicySpec",
            "SampleBatch", "compute_advantages", "Postprocessing"]


def test_rllib_env_import_paths():
    from relayrl import MultiAgentEnv, MultiAgentEpisode
    from relayrl.env import MultiAgentEnv as FromEnv
    from relayrl.env import ParallelPettingZooEnv, PettingZooEnv
    from relayrl.env.multi_agent_env import MultiAgentEnv as Defined
    from relayrl.episodes.multi_agent_episode import MultiAgentEpisode as DefinedEpisode
    from relayrl.env.wrappers.pettingzoo_env import PettingZooEnv as DefinedPettingZoo

    assert MultiAgentEnv is FromEnv is Defined and MultiAgentEpisode is DefinedEpisode
    assert PettingZooEnv is DefinedPettingZoo and ParallelPettingZooEnv.__name__ == "ParallelPettingZooEnv"


def test_the_design_contract_is_importable_from_relayrl():
    missing = [name for name in CONTRACT if not hasattr(relayrl, name)]
    assert not missing


def test_every_name_of_the_rllib_paths_is_importable_from_relayrl():
    ambiguous = []
    for name in ALL_NAMES:
        sources = top_level_sources(name)
        if len(sources) > 1:
            ambiguous.append(name)
            with pytest.raises(AttributeError, match=f"several `{name}`s"):
                getattr(relayrl, name)
            continue
        assert getattr(relayrl, name) is getattr(importlib.import_module(sources[0]), name), name
    # The exceptions are the ones docs/porting.md names.
    with open(os.path.join(ROOT, "docs", "porting.md")) as f:
        text = f.read()
    listed = re.search(r"importable from\s+`relayrl` itself.*?except\s+(.*?)\)", text, re.S)
    assert listed, "docs/porting.md no longer says which names are not importable from relayrl"
    assert sorted(re.findall(r"`(\w+)`", listed.group(1))) == sorted(ambiguous)


def test_unknown_names_still_raise_attribute_errors():
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchName'"):
        relayrl.NoSuchName
    assert not hasattr(relayrl, "__wrapped__")
