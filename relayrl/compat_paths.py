"""RLlib's module paths, with `ray.rllib` replaced by `relayrl`: the one table of what each of them holds.

Code written for RLlib imports from paths like `ray.rllib.core.rl_module.default_model_config`; replacing
`ray.rllib` by `relayrl` must give the same names. relayrl keeps its own layout (relayrl/modules, relayrl/learner,
...); `RLLIB_PATHS` says, for every RLlib path, which relayrl module holds each name. A path relayrl does not
have as a module of its own is a generated stub (`STUB`), whose names load lazily on first use, so importing
it stays light (no torch until a name that needs it is used). Where the path is one of relayrl's own packages
(relayrl.core, relayrl.env, relayrl.connectors.learner, ...), its `__init__` calls `exports(__name__)` too.

Regenerate the stubs after changing the table: `python -c "from relayrl.compat_paths import main; main()"` (writes only missing or
generated files; tests/porting/test_compat_paths.py checks that they are current and that every path names
the same objects as the module it points to). The algorithm packages (relayrl.algorithms.ppo, ...) come from
relayrl/algorithms/registry.py.
"""
import importlib
import os
import sys
from typing import Callable, Dict, List, Tuple, Union

# A module path -> {name: relayrl module holding it}, or a module path whose public names (`__all__`) it all holds.
Exports = Union[Dict[str, str], str]

_MODULES = "relayrl.modules"
_CONNECTORS = "relayrl.connectors"
_TESTING_SCRIPT = "relayrl.testing.example_script"
_ENVS = "relayrl.examples.envs.classes"  # (+ ".<module>": the example envs live at RLlib's paths)
_MA_ENVS = "relayrl.testing.multi_agent_example_envs"
# relayrl's own modules at RLlib's example paths (outside relayrl.testing: a checkpoint may name what they hold)
_EXAMPLE_ENVS = {"simple_corridor": "SimpleCorridor", "stateless_cartpole": "StatelessCartPole",
                 "cartpole_with_dict_observation_space": "CartPoleWithDictObservationSpace",
                 "random_env": "RandomEnv", "action_mask_env": "ActionMaskEnv"}
_EXAMPLE_ENV_MODULES = {name: module for module, name in _EXAMPLE_ENVS.items()}
_RPS = "relayrl.examples.envs.classes.multi_agent.rock_paper_scissors"
_TIC_TAC_TOE = "relayrl.examples.envs.classes.multi_agent.tic_tac_toe"
_RPS_RLM = "relayrl.examples.rl_modules.classes.rock_paper_scissors_heuristic_rlm"
_EXPLORATION = "relayrl.exploration"
_POSTPROCESSING = "relayrl.policy.postprocessing"
_EXECUTION = "relayrl.policy.execution"
_PPO_TORCH_POLICY = "relayrl.algorithms.ppo.ppo_torch_policy"
_PPO_TF_POLICY = "relayrl.algorithms.ppo.ppo_tf_policy"
_OLD_NAMES = "relayrl.algorithms.old_names"


def _same(module: str, *names: str) -> Dict[str, str]:
    return {name: module for name in names}


def _torch_paths(algo: str, files: Dict[str, Tuple[str, str]]) -> Dict[str, Dict[str, str]]:
    """RLlib's `algorithms/<algo>/torch/<file>` paths: {file: (name, relayrl module in the algorithm's package)}."""
    package = f"relayrl.algorithms.{algo}"
    return {f"{package}.torch": {}, **{f"{package}.torch.{file}": {name: f"{package}.{module}"}
                                       for file, (name, module) in files.items()}}


def _connectors(*names: str) -> Dict[str, str]:
    """Connector pieces, from relayrl.connectors' own table of pieces."""
    return _same(_CONNECTORS, *names)


_CORE_NAMES = {**_same("relayrl.core.columns", "Columns", "DEFAULT_MODULE_ID", "DEFAULT_POLICY_ID", "ALL_MODULES"),
               **_same("relayrl.core.components", "COMPONENT_ENV_RUNNER", "COMPONENT_EVAL_ENV_RUNNER",
                       "COMPONENT_ENV_TO_MODULE_CONNECTOR", "COMPONENT_MODULE_TO_ENV_CONNECTOR",
                       "COMPONENT_LEARNER_GROUP", "COMPONENT_LEARNER", "COMPONENT_RL_MODULE", "COMPONENT_OPTIMIZER",
                       "COMPONENT_METRICS_LOGGER")}
_RL_MODULE = {**_same(f"{_MODULES}.rl_module", "RLModule"),
              **_same(f"{_MODULES}.rl_module_spec", "RLModuleSpec", "MultiRLModuleSpec"),
              **_same(f"{_MODULES}.multi_rl_module", "MultiRLModule")}
_EXAMPLE_SCRIPT = _same(_TESTING_SCRIPT, "add_rllib_example_script_args", "run_rllib_example_script_experiment",
                        "should_stop", "check_learning_achieved")
_CALLBACKS = _same("relayrl.callbacks", "RLlibCallback", "DefaultCallbacks", "make_multi_callbacks")
_ENV_TO_MODULE = ("AddObservationsFromEpisodesToBatch", "AddStatesFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad",
                  "BatchIndividualItems", "EnvToModulePipeline", "FlattenObservations", "FrameStackingEnvToModule",
                  "MeanStdFilter", "MultiAgentObservationPreprocessor", "NumpyToTensor", "ObservationPreprocessor",
                  "PrevActionsPrevRewards", "SingleAgentObservationPreprocessor")
_LEARNER = ("AddColumnsFromEpisodesToTrainBatch", "AddNextObservationsFromEpisodesToTrainBatch",
            "AddObservationsFromEpisodesToBatch", "AddOneTsToEpisodesAndTruncate",
            "AddStatesFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad", "BatchIndividualItems",
            "ComputeReturnsToGo", "FrameStackingLearner", "GeneralAdvantageEstimation", "LearnerConnectorPipeline",
            "NumpyToTensor")
_MODULE_TO_ENV = ("GetActions", "ListifyDataForVectorEnv", "ModuleToEnvPipeline", "NormalizeAndClipActions",
                  "RemoveSingleTsTimeRankFromBatch", "TensorToNumpy", "UnBatchToIndividualItems")
_COMMON = ("AddObservationsFromEpisodesToBatch", "AddStatesFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad",
           "BatchIndividualItems", "FrameStacking", "NumpyToTensor", "TensorToNumpy")

RLLIB_PATHS: Dict[str, Exports] = {
    # algorithms (the algorithm packages themselves: relayrl/algorithms/registry.py)
    "relayrl.algorithms": {**_same("relayrl.algorithms.algorithm", "Algorithm"),
                           **_same("relayrl.algorithms.algorithm_config", "AlgorithmConfig")},
    "relayrl.algorithms.algorithm": _same("relayrl.algorithms.algorithm", "Algorithm"),
    "relayrl.algorithms.algorithm_config": _same("relayrl.algorithms.algorithm_config", "AlgorithmConfig",
                                                 "NotProvided"),
    "relayrl.algorithms.callbacks": _CALLBACKS,
    "relayrl.agents": {},
    "relayrl.agents.callbacks": _CALLBACKS,  # RLlib 1.x's path, still in old docs (seed 000's curriculum snippet)
    "relayrl.agents.ppo": {**_same(_PPO_TORCH_POLICY, "PPOTorchPolicy"), **_same(_PPO_TF_POLICY, "PPOTFPolicy"),
                           **_same(_OLD_NAMES, "PPOTrainer")},
    "relayrl.agents.trainer": _same(_OLD_NAMES, "Trainer"),
    "relayrl.agents.impala": _same(_OLD_NAMES, "ImpalaTrainer"),
    "relayrl.agents.dqn": _same(_OLD_NAMES, "DQNTrainer"),
    "relayrl.agents.sac": _same(_OLD_NAMES, "SACTrainer"),
    "relayrl.agents.ppo.appo": _same(_OLD_NAMES, "APPOTrainer"),
    "relayrl.agents.ppo.ppo_torch_policy": _same(_PPO_TORCH_POLICY, "PPOTorchPolicy"),
    "relayrl.agents.ppo.ppo_tf_policy": _same(_PPO_TF_POLICY, "PPOTFPolicy"),  # needs TensorFlow (the tf extra)
    "relayrl.callbacks": _CALLBACKS,
    "relayrl.callbacks.callbacks": _same("relayrl.callbacks", "RLlibCallback"),
    # core: columns, constants, RLModules, Learners
    "relayrl.core": _CORE_NAMES,
    "relayrl.core.columns": _same("relayrl.core.columns", "Columns"),
    "relayrl.core.rl_module": _RL_MODULE,
    "relayrl.core.rl_module.rl_module": {k: v for k, v in _RL_MODULE.items() if k in ("RLModule", "RLModuleSpec")},
    "relayrl.core.rl_module.multi_rl_module": {k: v for k, v in _RL_MODULE.items() if k.startswith("Multi")},
    "relayrl.core.rl_module.default_model_config": _same(f"{_MODULES}.default_model_config", "DefaultModelConfig"),
    "relayrl.core.rl_module.torch": _same(f"{_MODULES}.rl_module", "TorchRLModule"),
    "relayrl.core.rl_module.torch.torch_rl_module": _same(f"{_MODULES}.rl_module", "TorchRLModule"),
    "relayrl.core.rl_module.apis": {**_same(f"{_MODULES}.rl_module", "ValueFunctionAPI"),
                                    **_same(f"{_MODULES}.target_network_api", "TargetNetworkAPI",
                                            "TARGET_NETWORK_ACTION_DIST_INPUTS")},
    "relayrl.core.rl_module.apis.value_function_api": _same(f"{_MODULES}.rl_module", "ValueFunctionAPI"),
    "relayrl.core.rl_module.apis.target_network_api": _same(f"{_MODULES}.target_network_api", "TargetNetworkAPI",
                                                          "TARGET_NETWORK_ACTION_DIST_INPUTS"),
    "relayrl.core.learner": {**_same("relayrl.learner.learner", "Learner"),
                             **_same("relayrl.learner.learner_group", "LearnerGroup")},
    "relayrl.core.learner.learner": _same("relayrl.learner.learner", "Learner", "DEFAULT_OPTIMIZER"),
    "relayrl.core.learner.learner_group": _same("relayrl.learner.learner_group", "LearnerGroup"),
    "relayrl.core.learner.torch": {"TorchLearner": "relayrl.learner.learner"},
    "relayrl.core.learner.torch.torch_learner": {"TorchLearner": "relayrl.learner.learner"},
    "relayrl.core.learner.utils": _same(f"{_MODULES}.target_network_api", "make_target_network"),
    "relayrl.core.models": {},
    "relayrl.core.models.base": _same(f"{_MODULES}.model_configs", "ACTOR", "CRITIC", "ENCODER_OUT", "Encoder"),
    "relayrl.core.models.configs": _same(f"{_MODULES}.model_configs", "MLPEncoderConfig", "MLPHeadConfig",
                                         "ModelConfig"),
    # connectors
    "relayrl.connectors.env_to_module": _connectors(*_ENV_TO_MODULE),
    "relayrl.connectors.env_to_module.frame_stacking": _connectors("FrameStackingEnvToModule"),
    "relayrl.connectors.learner": _connectors(*_LEARNER),
    "relayrl.connectors.learner.frame_stacking": _connectors("FrameStackingLearner"),
    "relayrl.connectors.module_to_env": _connectors(*_MODULE_TO_ENV),
    "relayrl.connectors.common": _connectors(*_COMMON),
    # env
    "relayrl.env": {**_same("relayrl.env.env_context", "EnvContext"),
                    **_same("relayrl.env.multi_agent_env", "MultiAgentEnv"),
                    **_same("relayrl.env.wrappers.pettingzoo_env", "PettingZooEnv", "ParallelPettingZooEnv")},
    "relayrl.env.env_runner": _same("relayrl.env.env_runner", "EnvRunner"),
    "relayrl.env.single_agent_env_runner": _same("relayrl.env.env_runner", "SingleAgentEnvRunner"),
    "relayrl.env.env_runner_group": _same("relayrl.env.env_runner_group", "EnvRunnerGroup"),
    "relayrl.env.single_agent_episode": _same("relayrl.env.single_agent_episode", "SingleAgentEpisode"),
    "relayrl.env.multi_agent_env": _same("relayrl.env.multi_agent_env", "ENV_STATE", "MultiAgentEnv",
                                         "make_multi_agent"),
    "relayrl.env.wrappers.group_agents_wrapper": _same("relayrl.env.wrappers.group_agents_wrapper", "GROUP_INFO",
                                                       "GROUP_REWARDS", "GroupAgentsWrapper"),
    "relayrl.env.multi_agent_env_runner": _same("relayrl.env.multi_agent_env_runner", "MultiAgentEnvRunner"),
    "relayrl.env.multi_agent_episode": _same("relayrl.episodes.multi_agent_episode", "MultiAgentEpisode"),
    "relayrl.evaluation": {},
    "relayrl.evaluation.postprocessing": _same(_POSTPROCESSING, "Postprocessing", "discount_cumsum",
                                               "compute_advantages", "compute_gae_for_sample_batch",
                                               "compute_bootstrap_value"),
    "relayrl.evaluation.episode": _same("relayrl.policy.rollout.episode", "PolicyEpisode"),
    # the old API stack's Policy API (relayrl/policy/)
    "relayrl.policy.torch_policy_template": _same("relayrl.policy.policy_template", "build_torch_policy"),
    "relayrl.policy.torch_policy_v2": _same("relayrl.policy.torch_policy_v2_subclassing", "TorchPolicyV2"),
    "relayrl.execution": _same(_EXECUTION, "synchronous_parallel_sample", "train_one_step",
                               "multi_gpu_train_one_step", "standardize_fields"),
    "relayrl.execution.rollout_ops": _same(_EXECUTION, "synchronous_parallel_sample", "standardize_fields"),
    "relayrl.execution.train_ops": _same(_EXECUTION, "train_one_step", "multi_gpu_train_one_step"),
    "relayrl.models": _same("relayrl.policy.models.catalog", "ModelCatalog", "MODEL_DEFAULTS"),
    "relayrl.models.catalog": _same("relayrl.policy.models.catalog", "ModelCatalog", "MODEL_DEFAULTS"),
    "relayrl.models.modelv2": _same("relayrl.policy.models.modelv2", "ModelV2"),
    "relayrl.models.torch": {},
    "relayrl.models.torch.torch_modelv2": _same("relayrl.policy.models.modelv2", "TorchModelV2"),
    "relayrl.models.torch.fcnet": _same("relayrl.policy.models.fully_connected", "FullyConnectedNetwork"),
    "relayrl.models.torch.recurrent_net": _same("relayrl.policy.models.lstm_wrapper", "LSTMWrapper"),
    "relayrl.models.torch.torch_action_dist": _same("relayrl.policy.models.torch_action_dist",
                                                    "TorchDistributionWrapper", "TorchCategorical",
                                                    "TorchDiagGaussian"),
    "relayrl.models.tf": {},
    "relayrl.models.tf.tf_modelv2": _same("relayrl.policy.models.tf_modelv2", "TFModelV2"),
    "relayrl.models.tf.fcnet": _same("relayrl.policy.models.tf_fully_connected", "FullyConnectedNetwork"),
    "relayrl.models.tf.recurrent_net": _same("relayrl.policy.models.tf_lstm_wrapper", "LSTMWrapper"),
    "relayrl.models.tf.tf_action_dist": _same("relayrl.policy.models.tf_action_dist", "TFActionDistribution",
                                              "Categorical", "DiagGaussian"),
    "relayrl.utils.tf_utils": _same("relayrl.policy.tf_utils", "explained_variance"),
    "relayrl.utils.metrics.learner_info": _same("relayrl.policy.torch_policy", "LEARNER_STATS_KEY"),
    "relayrl.evaluation.rollout_worker": _same("relayrl.env.current_env_runner", "get_global_worker"),
    # utils
    "relayrl.utils": {**_same("relayrl.core.annotations", "override", "PublicAPI", "DeveloperAPI"),
                      **_same("relayrl.core.framework", "try_import_torch", "try_import_tf")},
    "relayrl.utils.annotations": "relayrl.core.annotations",
    "relayrl.utils.numpy": "relayrl.core.numpy_utils",
    "relayrl.utils.images": "relayrl.core.images",
    "relayrl.utils.debug": _same("relayrl.core.global_seed", "update_global_seed_if_necessary"),
    "relayrl.utils.debug.deterministic": _same("relayrl.core.global_seed", "update_global_seed_if_necessary"),
    "relayrl.utils.framework": _same("relayrl.core.framework", "try_import_torch", "try_import_tf"),
    "relayrl.utils.typing": "relayrl.core.typing",
    "relayrl.utils.metrics": "relayrl.metrics.keys",
    "relayrl.utils.metrics.metrics_logger": _same("relayrl.metrics.metrics_logger", "MetricsLogger"),
    "relayrl.utils.test_utils": _EXAMPLE_SCRIPT,
    "relayrl.utils.exploration": _same(_EXPLORATION, "Exploration", "StochasticSampling", "EpsilonGreedy", "SoftQ",
                                       "GaussianNoise", "OrnsteinUhlenbeckNoise", "Random"),
    "relayrl.utils.exploration.exploration": _same(_EXPLORATION, "Exploration"),
    "relayrl.utils.exploration.stochastic_sampling": _same(_EXPLORATION, "StochasticSampling"),
    "relayrl.utils.exploration.epsilon_greedy": _same(_EXPLORATION, "EpsilonGreedy"),
    "relayrl.utils.exploration.soft_q": _same(_EXPLORATION, "SoftQ"),
    "relayrl.utils.exploration.gaussian_noise": _same(_EXPLORATION, "GaussianNoise"),
    "relayrl.utils.exploration.ornstein_uhlenbeck_noise": _same(_EXPLORATION, "OrnsteinUhlenbeckNoise"),
    "relayrl.utils.exploration.random": _same(_EXPLORATION, "Random"),
    "relayrl.utils.replay_buffers": _same("relayrl.replay", "EpisodeReplayBuffer", "PrioritizedEpisodeReplayBuffer",
                                          "MultiAgentEpisodeReplayBuffer", "MultiAgentPrioritizedEpisodeReplayBuffer"),
    "relayrl.utils.replay_buffers.episode_replay_buffer": _same("relayrl.replay", "EpisodeReplayBuffer"),
    "relayrl.utils.replay_buffers.prioritized_episode_buffer": _same("relayrl.replay",
                                                                     "PrioritizedEpisodeReplayBuffer"),
    "relayrl.utils.replay_buffers.multi_agent_episode_buffer": _same("relayrl.replay",
                                                                     "MultiAgentEpisodeReplayBuffer"),
    "relayrl.utils.replay_buffers.multi_agent_prioritized_episode_buffer": _same(
        "relayrl.replay", "MultiAgentPrioritizedEpisodeReplayBuffer"),
    # The algorithms' torch modules and Learners (relayrl's are torch; the Torch* names are aliases).
    **_torch_paths("ppo", {"default_ppo_torch_rl_module": ("DefaultPPOTorchRLModule", "default_ppo_rl_module"),
                           "ppo_torch_rl_module": ("PPOTorchRLModule", "default_ppo_rl_module"),
                           "ppo_torch_learner": ("PPOTorchLearner", "ppo_learner")}),
    **_torch_paths("dqn", {"default_dqn_torch_rl_module": ("DefaultDQNTorchRLModule", "default_dqn_rl_module"),
                           "dqn_torch_learner": ("DQNTorchLearner", "dqn_learner")}),
    **_torch_paths("sac", {"default_sac_torch_rl_module": ("DefaultSACTorchRLModule", "default_sac_rl_module"),
                           "sac_torch_learner": ("SACTorchLearner", "sac_learner")}),
    **_torch_paths("appo", {"default_appo_torch_rl_module": ("DefaultAPPOTorchRLModule", "default_appo_rl_module"),
                            "appo_torch_learner": ("APPOTorchLearner", "appo_learner")}),
    **_torch_paths("impala", {"impala_torch_learner": ("IMPALATorchLearner", "impala_learner")}),
    **_torch_paths("bc", {"default_bc_torch_rl_module": ("DefaultBCTorchRLModule", "default_bc_rl_module")}),
    **_torch_paths("marwil", {"marwil_torch_learner": ("MARWILTorchLearner", "marwil_learner")}),
    **_torch_paths("cql", {"default_cql_torch_rl_module": ("DefaultCQLTorchRLModule", "default_cql_rl_module"),
                           "cql_torch_learner": ("CQLTorchLearner", "cql_learner")}),
    **_torch_paths("iql", {"default_iql_torch_rl_module": ("DefaultIQLTorchRLModule", "default_iql_rl_module"),
                           "iql_torch_learner": ("IQLTorchLearner", "iql_learner")}),
    # offline data (relayrl/offline/ holds RLlib's offline_data.py itself)
    "relayrl.offline.offline_prelearner": _same("relayrl.offline.prelearner", "OfflinePreLearner", "SCHEMA"),
    # the example scripts' helpers, envs and modules
    "relayrl.utils.spaces": {},
    "relayrl.utils.spaces.space_utils": "relayrl.core.space_utils",
    "relayrl.examples": {},
    "relayrl.examples.utils": _EXAMPLE_SCRIPT,
    "relayrl.examples.envs": {},
    "relayrl.examples.rl_modules": {},
    "relayrl.examples.rl_modules.classes": _same(_RPS_RLM, "AlwaysSameHeuristicRLM", "BeatLastHeuristicRLM"),
    "relayrl.examples.rl_modules.classes.random_rlm": _same("relayrl.modules.random_rl_module", "RandomRLModule"),
    _RPS_RLM: _same(_RPS_RLM, "AlwaysSameHeuristicRLM", "BeatLastHeuristicRLM"),
    "relayrl.examples.rl_modules.classes.action_masking_rlm": _same("relayrl.modules.action_masking",
                                                                   "ActionMaskingTorchRLModule"),
    "relayrl.examples.envs.classes": {name: f"{_ENVS}.{module}" for module, name in _EXAMPLE_ENVS.items()},
    **{f"{_ENVS}.{module}": _same(f"{_ENVS}.{module}", name) for module, name in _EXAMPLE_ENVS.items()},
    "relayrl.examples.envs.classes.multi_agent": {
        **_same(_MA_ENVS, "MultiAgentCartPole", "MultiAgentCartPoleWithDictObservationSpace", "MultiAgentMountainCar",
                "MultiAgentPendulum", "MultiAgentStatelessCartPole"),
        **{name: f"{_ENVS}.{_EXAMPLE_ENV_MODULES[name]}" for name in ("StatelessCartPole",
                                                                      "CartPoleWithDictObservationSpace")},
        "make_multi_agent": "relayrl.env.multi_agent_env"},
    _RPS: _same(_RPS, "RockPaperScissors"),
    _TIC_TAC_TOE: _same(_TIC_TAC_TOE, "TicTacToe"),
}

# relayrl's own modules among the paths: they define (or hook) the names themselves; never generated.
# (relayrl's own packages with nothing else in their __init__, such as relayrl.env or relayrl.connectors.learner,
# get the generated one.)
OWN_MODULES = ("relayrl.algorithms.algorithm", "relayrl.algorithms.algorithm_config", "relayrl.callbacks",
               "relayrl.core", "relayrl.core.columns", "relayrl.env.env_runner", "relayrl.env.env_runner_group",
               "relayrl.env.single_agent_episode", "relayrl.env.multi_agent_env", "relayrl.env.multi_agent_env_runner",
               "relayrl.env.wrappers.group_agents_wrapper",
               *(f"{_ENVS}.{module}" for module in _EXAMPLE_ENVS), _RPS, _TIC_TAC_TOE, _RPS_RLM)

STUB_MARKER = "Generated from relayrl/compat_paths.py (its main())"


def names_of(module_name: str) -> Dict[str, str]:
    """{name: relayrl module} that `module_name` holds."""
    exports = RLLIB_PATHS[module_name]
    if isinstance(exports, str):
        return {name: exports for name in importlib.import_module(exports).__all__}
    return dict(exports)


def top_level_sources(name: str) -> List[str]:
    """The relayrl modules holding `name` among the table's paths (`from relayrl import name` uses the one there
    is; where two paths hold different objects under one name, the caller names both)."""
    return sorted({names[name] for names in map(names_of, RLLIB_PATHS) if name in names})


def exports(module_name: str) -> Tuple[Callable, Callable, List[str]]:
    """(__getattr__, __dir__, __all__) for a module of the table: its names load on first use."""
    names = names_of(module_name)
    module = sys.modules[module_name]

    def __getattr__(attr):
        source = names.get(attr)
        if source is None:
            raise AttributeError(f"module '{module_name}' has no attribute '{attr}'")
        value = getattr(importlib.import_module(source), attr)
        setattr(module, attr, value)
        return value

    public = sorted(names)
    own = [name for name in vars(module) if not name.startswith("_")]
    return __getattr__, lambda: sorted(set(public) | set(own)), public


# -- the generated stub files -------------------------------------------------------------------------------

def is_package(module_name: str) -> bool:
    """A path with sub-paths below it in the table: its stub is an __init__.py."""
    return any(other.startswith(module_name + ".") for other in RLLIB_PATHS)


def stub_path(module_name: str, root: str) -> str:
    parts = module_name.split(".")
    if is_package(module_name) or os.path.isdir(os.path.join(root, *parts)):  # relayrl's own package too
        return os.path.join(root, *parts, "__init__.py")
    return os.path.join(root, *parts[:-1], parts[-1] + ".py")


def stub_text(module_name: str) -> str:
    rllib = "ray.rllib" + module_name[len("relayrl"):]
    return (f'"""RLlib\'s `{rllib}`, for code ported by changing imports (names in relayrl/compat_paths.py).\n\n'
            f'{STUB_MARKER}; do not edit.\n"""\n'
            "from relayrl.compat_paths import exports\n\n"
            "__getattr__, __dir__, __all__ = exports(__name__)\n")


def stub_modules() -> List[str]:
    return [name for name in RLLIB_PATHS if name not in OWN_MODULES]


def write_stubs(root: str) -> List[str]:
    """Write every missing or outdated generated stub below `root` (the folder holding relayrl/); return paths."""
    written = []
    for module_name in stub_modules():
        path = stub_path(module_name, root)
        text = stub_text(module_name)
        if os.path.exists(path):
            with open(path) as f:
                current = f.read()
            if current == text:
                continue
            if current.strip() and STUB_MARKER not in current:  # an empty __init__ may become a stub
                raise RuntimeError(f"{path} is not a generated stub; add {module_name} to OWN_MODULES or move it")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        written.append(path)
    return written


def main() -> None:
    for written_path in write_stubs(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        print("wrote", written_path)
