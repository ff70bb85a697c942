"""The classes of relayrl a checkpoint may name: the one list, by module.

Loading a checkpoint looks a stored name ("module:Class") up here; it imports a module only if it is a key of
`NAMEABLE` (relayrl's own modules, whose import has no side effects) and hands out only the classes listed for it,
each only where a class of its kind may stand (trust.py). Anything else a checkpoint names resolves only to what
the caller passes or registered in this process (`trusted=`, `register_env`, the class it loads with).

What is listed: relayrl's extension classes of the kinds a config or checkpoint names (algorithms and their
configs, RL modules and their specs, learners, connector pieces, exploration, replay buffers, callbacks, Policy
classes) and its example envs, which have no side effects. What is not: anything in relayrl.testing (test
helpers such as FaultyEnv create files and end processes), relayrl.__main__ (the command line), env wrappers
(they need an env to wrap; VideoRecorder writes files) and abstract bases. `NOT_NAMEABLE` gives the reason for
each class of a nameable kind left out; tests/reliability/test_nameable_classes.py checks that every such class
of relayrl is in one of the two tables.
"""
from typing import Dict, Tuple

_EXAMPLES = "relayrl.examples"

NAMEABLE: Dict[str, Tuple[str, ...]] = {
    # algorithms and their configs
    "relayrl.algorithms.algorithm": ("Algorithm",),
    "relayrl.algorithms.algorithm_config": ("AlgorithmConfig",),
    "relayrl.algorithms.ppo.ppo": ("PPO",),
    "relayrl.algorithms.ppo.ppo_config": ("PPOConfig",),
    "relayrl.algorithms.dqn.dqn": ("DQN",),
    "relayrl.algorithms.dqn.dqn_config": ("DQNConfig",),
    "relayrl.algorithms.sac.sac": ("SAC",),
    "relayrl.algorithms.sac.sac_config": ("SACConfig",),
    "relayrl.algorithms.impala.impala": ("IMPALA",),
    "relayrl.algorithms.impala.impala_config": ("IMPALAConfig",),
    "relayrl.algorithms.appo.appo": ("APPO",),
    "relayrl.algorithms.appo.appo_config": ("APPOConfig",),
    "relayrl.policy.policy_algorithm_config": ("PolicyAlgorithmConfig",),
    "relayrl.algorithms.marwil.marwil": ("MARWIL",),
    "relayrl.algorithms.marwil.marwil_config": ("MARWILConfig",),
    "relayrl.algorithms.bc.bc": ("BC",),
    "relayrl.algorithms.bc.bc_config": ("BCConfig",),
    "relayrl.algorithms.cql.cql": ("CQL",),
    "relayrl.algorithms.cql.cql_config": ("CQLConfig",),
    "relayrl.algorithms.iql.iql": ("IQL",),
    "relayrl.algorithms.iql.iql_config": ("IQLConfig",),
    f"{_EXAMPLES}.algorithms.classes.vpg": ("VPG", "VPGConfig"),
    f"{_EXAMPLES}.algorithms.classes.appo_w_shared_data_actor": ("APPOWithSharedDataActor",),
    # RL modules, their specs and model configs
    "relayrl.modules.rl_module_spec": ("RLModuleSpec", "MultiRLModuleSpec"),
    "relayrl.modules.default_model_config": ("DefaultModelConfig",),
    "relayrl.modules.multi_rl_module": ("MultiRLModule",),
    "relayrl.modules.random_rl_module": ("RandomRLModule",),
    "relayrl.modules.policy_rl_module": ("PolicyRLModule",),  # an old-stack Policy acting among RLModules
    "relayrl.modules.action_masking": ("ActionMaskingTorchRLModule",),
    "relayrl.algorithms.ppo.default_ppo_rl_module": ("DefaultPPOTorchRLModule",),
    "relayrl.algorithms.dqn.default_dqn_rl_module": ("DefaultDQNTorchRLModule",),
    "relayrl.algorithms.sac.default_sac_rl_module": ("DefaultSACTorchRLModule",),
    "relayrl.algorithms.appo.default_appo_rl_module": ("DefaultAPPOTorchRLModule",),
    "relayrl.algorithms.cql.default_cql_rl_module": ("DefaultCQLTorchRLModule",),
    "relayrl.algorithms.iql.default_iql_rl_module": ("DefaultIQLTorchRLModule",),
    f"{_EXAMPLES}.rl_modules.classes.rock_paper_scissors_heuristic_rlm": ("AlwaysSameHeuristicRLM",
                                                                         "BeatLastHeuristicRLM"),
    f"{_EXAMPLES}.rl_modules.classes.lstm_containing_rlm": ("LSTMContainingRLModule",
                                                           "LSTMContainingRLModuleWithTargetNetwork"),
    f"{_EXAMPLES}.rl_modules.classes.modelv2_to_rlm": ("ModelV2ToRLModule",),
    f"{_EXAMPLES}.rl_modules.classes.tiny_atari_cnn_rlm": ("TinyAtariCNN",),
    f"{_EXAMPLES}.rl_modules.classes.vpg_torch_rlm": ("VPGTorchRLModule",),
    f"{_EXAMPLES}.rl_modules.classes.vpg_using_shared_encoder_rlm": ("SharedEncoder",
                                                                    "VPGMultiRLModuleWithSharedEncoder",
                                                                    "VPGPolicyAfterSharedEncoder",
                                                                    "VPGPolicyNoSharedEncoder"),
    # EnvRunners (env_runner_cls; the external-env server listens only when an algorithm builds it)
    "relayrl.env.env_runner": ("EnvRunner",),
    "relayrl.env.multi_agent_env_runner": ("MultiAgentEnvRunner",),
    "relayrl.env.external.env_runner_server_for_external_inference": ("EnvRunnerServerForExternalInference",),
    # learners
    "relayrl.algorithms.ppo.ppo_learner": ("PPOLearner",),
    "relayrl.algorithms.dqn.dqn_learner": ("DQNLearner",),
    "relayrl.algorithms.sac.sac_learner": ("SACLearner",),
    "relayrl.algorithms.impala.impala_learner": ("IMPALALearner",),
    "relayrl.algorithms.appo.appo_learner": ("APPOLearner",),
    "relayrl.algorithms.marwil.marwil_learner": ("MARWILLearner",),
    "relayrl.algorithms.cql.cql_learner": ("CQLLearner",),
    "relayrl.algorithms.iql.iql_learner": ("IQLLearner",),
    f"{_EXAMPLES}.learners.classes.custom_ppo_loss_fn_learner": ("PPOTorchLearnerWithWeightRegularizerLoss",),
    f"{_EXAMPLES}.learners.classes.separate_vf_lr_and_optimizer_learner": ("PPOTorchLearnerWithSeparateVfOptimizer",),
    f"{_EXAMPLES}.learners.classes.vpg_torch_learner": ("VPGTorchLearner",),
    f"{_EXAMPLES}.learners.classes.vpg_torch_learner_shared_optimizer": ("VPGTorchLearnerSharedOptimizer",),
    # connector pieces and pipelines
    "relayrl.connectors.connector_pipeline_v2": ("ConnectorPipelineV2", "EnvToModulePipeline", "ModuleToEnvPipeline",
                                                 "LearnerConnectorPipeline"),
    "relayrl.connectors.common.add_observations_from_episodes_to_batch": ("AddObservationsFromEpisodesToBatch",),
    "relayrl.connectors.common.add_states_from_episodes_to_batch": ("AddStatesFromEpisodesToBatch",),
    "relayrl.connectors.common.add_time_dim_to_batch_and_zero_pad": ("AddTimeDimToBatchAndZeroPad",),
    "relayrl.connectors.common.agent_to_module_mapping": ("AgentToModuleMapping",),
    "relayrl.connectors.common.batch_individual_items": ("BatchIndividualItems",),
    "relayrl.connectors.common.frame_stacking": ("FrameStacking", "FrameStackingEnvToModule", "FrameStackingLearner"),
    "relayrl.connectors.common.numpy_to_tensor": ("NumpyToTensor",),
    "relayrl.connectors.common.tensor_to_numpy": ("TensorToNumpy",),
    "relayrl.connectors.env_to_module.flatten_observations": ("FlattenObservations",),
    "relayrl.connectors.env_to_module.mean_std_filter": ("MeanStdFilter",),
    "relayrl.connectors.env_to_module.prev_actions_prev_rewards": ("PrevActionsPrevRewards",),
    "relayrl.connectors.learner.add_columns_from_episodes_to_train_batch": ("AddColumnsFromEpisodesToTrainBatch",),
    "relayrl.connectors.learner.add_next_observations_from_episodes_to_train_batch": (
        "AddNextObservationsFromEpisodesToTrainBatch",),
    "relayrl.connectors.learner.compute_returns_to_go": ("ComputeReturnsToGo",),
    f"{_EXAMPLES}.connectors.classes.add_other_agents_row_index_to_xy_pos": ("AddOtherAgentsRowIndexToXYPos",),
    f"{_EXAMPLES}.connectors.classes.protobuf_cartpole_observation_decoder": ("ProtobufCartPoleObservationDecoder",),
    "relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate": ("AddOneTsToEpisodesAndTruncate",),
    "relayrl.connectors.learner.general_advantage_estimation": ("GeneralAdvantageEstimation",),
    "relayrl.connectors.module_to_env.get_actions": ("GetActions",),
    "relayrl.connectors.module_to_env.listify_data_for_vector_env": ("ListifyDataForVectorEnv",),
    "relayrl.connectors.module_to_env.module_to_agent_unmapping": ("ModuleToAgentUnmapping",),
    "relayrl.connectors.module_to_env.normalize_and_clip_actions": ("NormalizeAndClipActions",),
    "relayrl.connectors.module_to_env.remove_single_ts_time_rank_from_batch": ("RemoveSingleTsTimeRankFromBatch",),
    "relayrl.connectors.module_to_env.un_batch_to_individual_items": ("UnBatchToIndividualItems",),
    # exploration
    "relayrl.exploration.epsilon_greedy": ("EpsilonGreedy",),
    "relayrl.exploration.gaussian_noise": ("GaussianNoise",),
    "relayrl.exploration.ornstein_uhlenbeck_noise": ("OrnsteinUhlenbeckNoise",),
    "relayrl.exploration.random_exploration": ("Random",),
    "relayrl.exploration.soft_q": ("SoftQ",),
    "relayrl.exploration.stochastic_sampling": ("StochasticSampling",),
    # replay buffers
    "relayrl.replay.episode_replay_buffer": ("EpisodeReplayBuffer",),
    "relayrl.replay.prioritized_episode_replay_buffer": ("PrioritizedEpisodeReplayBuffer",),
    "relayrl.replay.multi_agent_episode_replay_buffer": ("MultiAgentEpisodeReplayBuffer",
                                                         "MultiAgentPrioritizedEpisodeReplayBuffer"),
    # callbacks
    "relayrl.callbacks": ("RLlibCallback",),
    f"{_EXAMPLES}.envs.env_rendering_and_recording": ("EnvRenderCallback",),
    # the Policy API: specs and relayrl's Policy classes
    "relayrl.core.policy_spec": ("PolicySpec",),
    "relayrl.algorithms.ppo.ppo_torch_policy": ("PPOTorchPolicy",),
    "relayrl.algorithms.ppo.ppo_tf_policy": ("PPOTFPolicy",),
    f"{_EXAMPLES}._old_api_stack.policy.random_policy": ("RandomPolicy",),
    # example envs (no side effects: they touch nothing outside themselves)
    f"{_EXAMPLES}.envs.classes.simple_corridor": ("SimpleCorridor",),
    f"{_EXAMPLES}.envs.classes.stateless_cartpole": ("StatelessCartPole",),
    f"{_EXAMPLES}.envs.classes.cartpole_with_dict_observation_space": ("CartPoleWithDictObservationSpace",),
    f"{_EXAMPLES}.envs.classes.random_env": ("RandomEnv",),
    f"{_EXAMPLES}.envs.classes.action_mask_env": ("ActionMaskEnv",),
    f"{_EXAMPLES}.envs.classes.multi_agent.rock_paper_scissors": ("RockPaperScissors",),
    f"{_EXAMPLES}.envs.classes.multi_agent.tic_tac_toe": ("TicTacToe",),
    f"{_EXAMPLES}.envs.classes.cartpole_with_protobuf_observation_space": ("CartPoleWithProtobufObservationSpace",),
    f"{_EXAMPLES}.envs.classes.multi_agent.double_row_corridor_env": ("DoubleRowCorridorEnv",),
    f"{_EXAMPLES}.envs.classes.multi_agent.two_step_game": ("TwoStepGame", "TwoStepGameWithGroupedAgents"),
    f"{_EXAMPLES}.envs.classes.multi_agent": ("MultiAgentCartPole", "MultiAgentMountainCar", "MultiAgentPendulum",
                                              "MultiAgentStatelessCartPole",
                                              "MultiAgentCartPoleWithDictObservationSpace"),
}

# Modules a checkpoint's gymnasium "module:EnvId" env string may name (gym.make imports the module, which
# registers EnvId): env packages whose import only registers their ids. ale_py: "ale_py:ALE/Pong-v5", the string
# RLlib's Atari examples use.
ENV_MODULES: Tuple[str, ...] = ("ale_py",)

# Classes of a nameable kind that a checkpoint may not name, and why ("module:Class" -> reason).
_ABSTRACT = "an abstract base: a config names one of its subclasses"
_WRAPPER = "an env wrapper: it needs the env it wraps, so it is never a config's env"
NOT_NAMEABLE: Dict[str, str] = {
    "relayrl.modules.rl_module:RLModule": _ABSTRACT,
    "relayrl.learner.learner:Learner": _ABSTRACT,
    "relayrl.connectors.connector_v2:ConnectorV2": _ABSTRACT,
    "relayrl.exploration.exploration:Exploration": _ABSTRACT,
    "relayrl.policy.policy:Policy": _ABSTRACT,
    "relayrl.policy.model_policy:ModelPolicy": _ABSTRACT + " (the templates' base)",
    "relayrl.policy.torch_policy:TorchPolicy": _ABSTRACT + " (build_torch_policy's base)",
    "relayrl.policy.torch_policy_v2_subclassing:TorchPolicyV2": _ABSTRACT + " (RLlib's subclassing form)",
    "relayrl.policy.eager_tf_policy:EagerTFPolicy": _ABSTRACT + " (build_tf_policy's base)",
    "relayrl.env.multi_agent_env:MultiAgentEnv": _ABSTRACT,
    f"{_EXAMPLES}.rl_modules.classes.rock_paper_scissors_heuristic_rlm:_Heuristic": _ABSTRACT,
    "relayrl.connectors.env_to_module.observation_preprocessor:SingleAgentObservationPreprocessor": _ABSTRACT,
    "relayrl.connectors.env_to_module.observation_preprocessor:MultiAgentObservationPreprocessor": _ABSTRACT,
    "relayrl.env.episode_limits:EpisodeLimits": _WRAPPER,
    "relayrl.env.episode_limits:MultiAgentEpisodeLimits": _WRAPPER,
    "relayrl.env.vector_env:ApplyFuncWrapper": _WRAPPER,
    "relayrl.env.wrappers.atari_wrappers:FireReset": _WRAPPER,
    "relayrl.env.wrappers.atari_wrappers:StackOnChannels": _WRAPPER,
    "relayrl.env.wrappers.video_recorder:VideoRecorder": _WRAPPER + "; it writes video files",
    "relayrl.env.wrappers.pettingzoo_env:PettingZooEnv": _WRAPPER + " (a PettingZoo env)",
    "relayrl.env.wrappers.pettingzoo_env:ParallelPettingZooEnv": _WRAPPER + " (a PettingZoo env)",
    "relayrl.env.wrappers.group_agents_wrapper:GroupAgentsWrapper": _WRAPPER + " (MultiAgentEnv.with_agent_groups)",
    "relayrl.env.external.simulator_client:_LoopbackEnv": "private to the simulator client (never a config's env)",
}


def is_declared(module_name: str, qualname: str) -> bool:
    return qualname in NAMEABLE.get(module_name, ())
