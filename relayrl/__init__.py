"""relayrl: RLlib's API and data path, fast on one machine.

The public names load lazily, so `import relayrl` is quick and imports neither torch, ray nor
tensorboard until a name that needs them is used.
"""
import importlib

from relayrl import omp_wait_policy as _omp_wait_policy  # noqa: F401  (first: before anything loads torch)
from relayrl.algorithms.registry import public_names as _algorithm_names

__version__ = "0.1.0"

_PUBLIC = {
    **_algorithm_names(),  # PPO, PPOConfig, PPOLearner, DefaultPPOTorchRLModule, DQN..., from the one table
    "Algorithm": "relayrl.algorithms.algorithm",
    "AlgorithmConfig": "relayrl.algorithms.algorithm_config",
    "NotProvided": "relayrl.algorithms.algorithm_config",
    "TargetNetworkAPI": "relayrl.modules.target_network_api",
    "EpisodeReplayBuffer": "relayrl.replay",
    "PrioritizedEpisodeReplayBuffer": "relayrl.replay",
    "make_replay_buffer": "relayrl.replay",
    "Exploration": "relayrl.exploration",
    "StochasticSampling": "relayrl.exploration",
    "EpsilonGreedy": "relayrl.exploration",
    "SoftQ": "relayrl.exploration",
    "GaussianNoise": "relayrl.exploration",
    "OrnsteinUhlenbeckNoise": "relayrl.exploration",
    "Random": "relayrl.exploration",
    "Checkpointable": "relayrl.checkpoints.checkpointable",
    "CheckpointError": "relayrl.checkpoints.errors",
    "EnvRunnerFailedError": "relayrl.distributed.env_runner_actors",
    "SingleAgentEpisode": "relayrl.episodes.single_agent_episode",
    "MultiAgentEpisode": "relayrl.episodes.multi_agent_episode",
    "MultiAgentEnv": "relayrl.env.multi_agent_env",
    "EnvRunner": "relayrl.env.env_runner",
    "SingleAgentEnvRunner": "relayrl.env.env_runner",
    "EnvRunnerGroup": "relayrl.env.env_runner_group",
    "EnvContext": "relayrl.env.env_context",
    "register_env": "relayrl.env.registry",
    "ConnectorV2": "relayrl.connectors.connector_v2",
    "ConnectorPipelineV2": "relayrl.connectors.connector_pipeline_v2",
    "Columns": "relayrl.core.columns",
    "DEFAULT_MODULE_ID": "relayrl.core.columns",
    "RLModule": "relayrl.modules.rl_module",
    "TorchRLModule": "relayrl.modules.rl_module",
    "ValueFunctionAPI": "relayrl.modules.rl_module",
    "RLModuleSpec": "relayrl.modules.rl_module_spec",
    "MultiRLModuleSpec": "relayrl.modules.rl_module_spec",
    "MultiRLModule": "relayrl.modules.multi_rl_module",
    "DefaultModelConfig": "relayrl.modules.default_model_config",
    "Learner": "relayrl.learner.learner",
    "LearnerGroup": "relayrl.learner.learner_group",
    "MetricsLogger": "relayrl.metrics.metrics_logger",
    "RLlibCallback": "relayrl.callbacks",
    "DefaultCallbacks": "relayrl.callbacks",
    "make_multi_callbacks": "relayrl.callbacks",
    # the old API stack's Policy API (seed 001; relayrl/policy/)
    "Policy": "relayrl.policy.policy",
    "PolicySpec": "relayrl.core.policy_spec",
    "SampleBatch": "relayrl.policy.sample_batch",
    "MultiAgentBatch": "relayrl.policy.sample_batch",
    "compute_advantages": "relayrl.policy.postprocessing",
    "Postprocessing": "relayrl.policy.postprocessing",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name):
    module = _PUBLIC.get(name) or _rllib_path_source(name)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _rllib_path_source(name: str) -> str:
    """Every public name of RLlib's paths (relayrl/compat_paths.py) is importable from relayrl too; a name two paths
    hold as different objects (the torch and TF default models) only from its path."""
    if name.startswith("__"):
        raise AttributeError(f"module 'relayrl' has no attribute '{name}'")
    from relayrl.compat_paths import RLLIB_PATHS, names_of, top_level_sources

    sources = top_level_sources(name)
    if len(sources) == 1:
        return sources[0]
    if not sources:
        raise AttributeError(f"module 'relayrl' has no attribute '{name}'")
    paths = sorted(path for path in RLLIB_PATHS if name in names_of(path))
    raise AttributeError(f"relayrl has several `{name}`s ({', '.join(sources)}): import it from its path, one of "
                         f"{', '.join(paths)}.")


def __dir__():
    return __all__


# relayrl's one import-time side effect: once ray.tune is imported (now or later; relayrl never imports
# it), Algorithm becomes a ray.tune.Trainable and Tune knows the algorithms by name (tune.Tuner("PPO")).
# Installing the hook imports nothing; see docs/architecture.md.
from relayrl.tune.trainable_base import install as _install_tune_bridge  # noqa: E402

_install_tune_bridge()
